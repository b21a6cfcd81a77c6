"""Which hit lines are read in full, and how the others are counted.

Reading a hit costs a window of up to 73 lines to normalise and the rules to run, so a log that
prints the same warning 100,000 times would cost minutes, and a hard stop after N hits would
hide what comes later (a CUDA OOM after 100,500 NCCL WARN lines). Instead:

- A line that repeats another hit line of the same source, equal but for its time of day, is
  read REPEAT_READS times and then only counted; the count goes to the first one read
  (`repeats_of`). The rank, host and pid prefixes are part of the line, so each rank's copy of a
  message is its own signature.
- After MAX_READS windows of one source the cap is reached: from then on only a line whose
  coarse signature (the line with every number removed) was never read before is read; the
  others are counted. Every distinct message therefore still reaches the rules, memory stays
  bounded (MAX_SIGNATURES signatures of each kind), and the counts say what was not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

REPEAT_READS = 4
MAX_READS = 100_000
MAX_SIGNATURES = 1 << 15
# The time of day and the date of a line (ISO, syslog, glog "E1003 10:41:01.123", dmesg) are the
# parts of a repeated message that change on every copy; everything else stays in the signature.
# (The lookahead only lets the engine skip to the next digit or "[" instead of trying every
# alternative at every byte: 8 us a line became 5.)
_TIME = re.compile(
    rb"(?=[\d\[])(?:\d{4}-\d\d-\d\d|\d\d:\d\d:\d\d(?:[.,]\d+)?|(?<=[IWEF])\d{4}(?= \d\d:)|^\[\s*\d+\.\d+\])"
)
_DIGITS = b"0123456789"  # deleted by bytes.translate: the coarse signature, 15 times faster than a sub


@dataclass
class HitBudget:
    max_reads: int = MAX_READS
    reads: int = 0
    repeats: int = 0  # lines counted as repeats of a line read before
    past_cap_counted: int = 0  # lines after the cap whose coarse signature was read before
    past_cap_read: int = 0  # lines after the cap read because their coarse signature was new
    past_cap_unsorted: int = 0  # lines after the cap counted without a signature (table full)
    cap_line: int = 0  # first line number at which the cap was reached
    repeats_of: dict[int, int] = field(default_factory=dict)  # line read -> later copies counted
    _fine: dict[int, list[int]] = field(default_factory=dict)  # signature -> [reads, first line]
    _coarse: set[int] = field(default_factory=set)
    _raw: dict[bytes, int] = field(default_factory=dict)  # short hit lines -> their signature

    @property
    def cap_reached(self) -> bool:
        return self.cap_line > 0

    def admit(self, line: bytes, line_no: int) -> bool:
        """Whether the hit on `line` (line number `line_no`) is read; if not, it is counted."""
        key = self._raw.get(line)  # an exact copy: no need to mask its time again
        if key is None:
            sig = _TIME.sub(b"#", line) if b":" in line or b"-" in line else line
            key = hash(sig)
            if len(line) <= 512 and len(self._raw) < MAX_SIGNATURES:
                self._raw[line] = key
        else:
            sig = b""  # only needed past the cap, computed there
        seen = self._fine.get(key)
        if seen is not None and seen[0] >= REPEAT_READS:
            self.repeats += 1
            self.repeats_of[seen[1]] = self.repeats_of.get(seen[1], 0) + 1
            return False
        if self.reads >= self.max_reads:
            if not self.cap_line:
                self.cap_line = line_no
            coarse = hash((sig or _TIME.sub(b"#", line)).translate(None, _DIGITS))
            if coarse in self._coarse:
                self.past_cap_counted += 1
                return False
            if len(self._coarse) >= MAX_SIGNATURES:
                self.past_cap_unsorted += 1
                return False
            self._coarse.add(coarse)
            self.past_cap_read += 1
        else:
            self.reads += 1
            if len(self._coarse) < MAX_SIGNATURES:
                self._coarse.add(hash((sig or _TIME.sub(b"#", line)).translate(None, _DIGITS)))
        if seen is not None:
            seen[0] += 1
        elif len(self._fine) < MAX_SIGNATURES:
            self._fine[key] = [1, line_no]
        return True

    def summary(self) -> dict[str, int]:
        """The counts for the report: nothing is left out silently."""
        out = {"repeated_lines_counted": self.repeats}
        if self.cap_reached:
            out.update(
                cap_reads=self.max_reads,
                cap_line=self.cap_line,
                past_cap_read=self.past_cap_read,
                past_cap_counted=self.past_cap_counted,
                past_cap_unsorted=self.past_cap_unsorted,
            )
        return out

"""NCCL's version as logs print it: one reader for the event builder and every rule.

Where it is printed: NCCL's banner at init ("NCCL version 2.18.1+cuda12.1", init.cc), torch's error text
("..., NCCL version 2.14.3"), nccl-tests' and frameworks' echoes of either. torch 1.8-1.11 misprinted
NCCL >= 2.9: NCCL_VERSION_CODE became major*10000 + minor*100 + patch (21003 for 2.10.3) while torch
still decoded major = code/1000, minor = code%1000/100, patch = code%100 and printed "NCCL version
21.0.3". A printed major of 20 or more is that code, decoded back here (and the printed form kept).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Optional

# The number: major.minor[.patch], and "+cuda12.1" when the banner names NCCL's CUDA. NUMBER (without
# groups) is for the rules' own patterns that embed it; parse() reads what they capture.
NUMBER = r"\d{1,3}\.\d{1,3}(?:\.\d{1,3})?(?:\+cuda\d+(?:\.\d+)*)?"
_PARTS = r"(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(?:\+cuda(\d+(?:\.\d+)*))?"
IN_TEXT = re.compile(r"NCCL version " + _PARTS)
_ALONE = re.compile(_PARTS)
# The smallest major torch's misreading prints (NCCL 2.9.x: code 209xx read as 20.9.x).
_MISREAD_MAJOR = 20


@dataclass(frozen=True)
class NcclVersion:
    version: str  # the release: "2.10.3"
    printed: str  # as the log printed it, "+cuda" included: "21.0.3" (torch 1.x), "2.18.1+cuda12.1"
    cuda: Optional[str]  # the CUDA NCCL was built for, from "+cuda12.1"

    def facts(self) -> dict[str, Any]:
        """The finding facts: nccl_version as printed (what a reader greps the log for); nccl_release when
        torch misprinted the release; NCCL's CUDA when the banner names it."""
        out: dict[str, Any] = {"nccl_version": self.printed}
        if not self.printed.startswith(self.version):
            out["nccl_release"] = self.version
        if self.cuda:
            out["nccl_cuda_version"] = self.cuda
        return out


def _read(m: re.Match[str]) -> NcclVersion:
    major, minor, patch, cuda = m.group(1), m.group(2), m.group(3), m.group(4)
    number = f"{major}.{minor}" + (f".{patch}" if patch is not None else "")
    if int(major) >= _MISREAD_MAJOR and patch is not None:
        code = int(major) * 1000 + int(minor) * 100 + int(patch)
        version = f"{code // 10000}.{code % 10000 // 100}.{code % 100}"
    else:
        version = number
    return NcclVersion(version, number + (f"+cuda{cuda}" if cuda else ""), cuda)


def parse(number: str) -> Optional[NcclVersion]:
    """A number a rule's pattern captured with NUMBER ("2.14.3+cuda11.7", "21.0.3"), or None."""
    m = _ALONE.fullmatch(number.strip())
    return _read(m) if m else None


def facts_of(number: Optional[str]) -> dict[str, Any]:
    """parse(number)'s facts, {} when there is no number or it is none."""
    v = parse(number) if number else None
    return v.facts() if v else {}


def find(text: str) -> Optional[NcclVersion]:
    """The first NCCL version `text` prints, or None."""
    if "NCCL version" not in text:
        return None
    m = IN_TEXT.search(text)
    return _read(m) if m else None


def find_all(text: str) -> Iterator[NcclVersion]:
    if "NCCL version" in text:
        for m in IN_TEXT.finditer(text):
            yield _read(m)

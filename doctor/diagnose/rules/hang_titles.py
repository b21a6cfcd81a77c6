"""A thread's title (the whole paste, one short line: vocabulary's _title) that says a collective hangs.

A hang prints nothing: many threads about one keep only their title ("NCCL hang on socket recv()", "all
reduce hangs (NCCL 2.8.0.3)", "dist.barrier() stuck forever", "Deadlock in all_gather with 8 GPUs"). What
hangs and that it hangs, within a few words of each other in one clause (vocabulary's _near), is a collective
that never completes: the watchdog's timeout class (RUN151), read at tier 1 as a title. A title that names
where in the loop it hangs, at the end of the data ("Training hangs in the end while calling dist.barrier()",
"DDP hangs after the last batch", "stuck at the end of epoch"), says more: one rank ran out of batches and
left the loop (or entered a barrier) while the others still wait in the gradient all-reduce: the ranks
disagree on the number of steps (uneven inputs, desync_hints' title row), RUN201.

Never read: a line with more than a title (a program's output says more than its hang), a warning that a
hang could happen ("This can potentially cause a hang", "Collectives are unchecked and may ... hang"), a
hang in the start-up ("NCCL init hangs", "stuck at NCCL INFO Bootstrap": the communicator's creation, not a
collective), a question or a request (vocabulary's _ASKING), a setting or a fix (_TITLE_ASIDE: "set
NCCL_BLOCKING_WAIT to avoid the hang", "no hang", "without hanging"), and a hang of something that is not a
collective ("Dataloader hangs with num_workers > 0", "vLLM server hangs on startup").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _GAP, _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_HANG = r"\bhang(?:s|ing|ed)?\b|\bhung\b|\bstuck\b|\bdeadlock(?:s|ed)?\b|\bfreez(?:e|es|ing)\b"
_COLLECTIVE = (
    r"\bnccl|\brccl|\bhccl|\bgloo\b|\bcollectives?\b|\ball[ _-]?reduce\w*|\ball[ _-]?gather\w*|"
    r"\breduce[ _-]?scatter\w*|\ball[ _-]?to[ _-]?all\w*|\bbroadcast\w*|\bbarrier\b|\bprocess ?group\w*"
)
_COLLECTIVE_HANG = lazy_re.compile(
    rf"(?i)(?:{_COLLECTIVE})(?:\(\))?{_GAP}(?:{_HANG})|(?:{_HANG}){_GAP}(?:{_COLLECTIVE})"
)
# the end of the data: "in the end", "at the very end", "after the last batch", "at the end of epoch" (not the
# end of a set-up: "at the end of initialization")
_END = (
    r"\b(?:at|in|near|towards?) the (?:very )?end\b"
    r"(?! of (?:the )?(?:init\w*|set ?up|start\w*|launch\w*|load\w*))|"
    r"\b(?:after|at|on|in|during) the (?:last|final) (?:few )?(?:batch|iteration|step|epoch)(?:e?s)?\b|"
    r"\bat (?:the )?end of (?:an? |the |each |every )?"
    r"(?:epoch|training|train|loop|data|dataset|iteration)s?\b"
)
_END_HANG = lazy_re.compile(rf"(?i)(?:{_HANG}){_GAP}(?:{_END})|(?:{_END}){_GAP}(?:{_HANG})")
# a hang that could happen, or that a change avoids: a warning or a fix, not a report
_MAY = lazy_re.compile(
    r"(?i)\b(?:may|might|can|could|would|potentially|possibly|avoid\w*|prevent\w*|fix\w*|resolv\w*|"
    r"solv\w*|workaround|detect\w*|debug\w*|diagnos\w*)\b"
)


# a hang in the job's start-up (the communicator's creation, the rendezvous): not a collective's
_STARTUP = lazy_re.compile(
    r"(?i)\binit\w*|\bbootstrap\w*|\bstart[ -]?up\b|\bconnect\w*|\brendezvous\b|\bcomm ?init\w*|"
    r"\bcommunicator creation|\bset ?up\b|\blaunch mode\b|\buniqueid\b|\bnew_group\b"
)


def _read(hit: Hit) -> bool:
    text = hit.text
    return _title(hit) and not _TITLE_ASIDE.search(text) and not _MAY.search(text)


def _end_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit):
        return None
    return [
        row.event(
            hit,
            f'the report names a hang at the end of the data ("{m.group(0)}"): one rank ran out of batches '
            "and left the loop (or entered a barrier) while the others wait in a collective it never joins",
            {"kind": "uneven_inputs", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "uneven_inputs"),
        )
    ]


def _collective_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit) or _STARTUP.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names a collective that hangs ("{m.group(0)}"): a collective that never completes, '
            "what the process group's watchdog reports as a timeout",
            {"kind": "collective_hang", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, hit.rank, "collective_hang"),
        )
    ]


_ANCHORS = (b" hang", b"Hang", b"HANG", b" hung", b"stuck", b"Stuck", b"eadlock", b"reez")
_WORTH = (rb"(?i:\bhang|\bhung\b|\bstuck\b|deadlock|\bfreez)",)
_WORDS = ("hang", "hung", "stuck", "deadlock", "freez")

SIGNATURES = (
    Signature(
        "title: a hang at the end of the data",
        _END_HANG,
        _end_hang,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "Training hangs in the end while calling dist.barrier()",
            "DDP stuck after the last batch of the epoch",
        ),
    ),
    Signature(
        "title: a collective hangs",
        _COLLECTIVE_HANG,
        _collective_hang,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "NCCL hang on socket recv()",
            "all reduce hangs (NCCL 2.8.0.3)",
            "Deadlock in all_gather with 8 GPUs",
        ),
    ),
)
parse = gated_reader(SIGNATURES)

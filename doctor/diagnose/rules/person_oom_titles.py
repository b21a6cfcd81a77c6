"""A thread's title in the first person that names the device's memory exhaustion: "I get cuda oom when saving
the final checkpoint", "I got CUDA OOM during evaluation", "We hit GPU OOM at step 100", "My job runs out of
GPU memory with FSDP".

vocabulary's net reads no line that says "I", "we" or "my" (its _PROSE): in a pasted log such a line is the
writer's narration around the program's message, not the message. A title is the report itself, and titles
name the device's OOM in the first person as often as without it. The words are the device-OOM row's own
(vocabulary's _DEVICE_OOM: the exhaustion with the device named, "not OOM" / "no OOM" denied there), read only
for a title (one short line) or a title pasted as the first line above its log, at tier 1 and marked
read_as title, as the net reads the impersonal title. Never read where the person says the OOM did not or no
longer happens, or that it is avoided, fixed or reduced ("I don't get OOM with one GPU", "we fixed the CUDA
OOM by ..."), nor a question how to (vocabulary's _ASKING) or a setting (_TITLE_ASIDE).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _DEVICE_OOM, _build, _head_title, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# the writer in the first person; a title that does not say it is the net's (vocabulary.py)
_PERSON = r"(?=.*(?<![\w'])(?:i|i'm|i've|i am|we|we're|we've|my|our)(?![\w']))"
_PERSON_OOM = lazy_re.compile(r"(?is)\A" + _PERSON + _DEVICE_OOM)
# the OOM denied, gone, avoided or fixed in the person's own words, or only supposed ("Would I get OOM with 8
# GPUs?": a plan, no run)
_DENIED = lazy_re.compile(
    r"(?i)\b(?:don't|dont|do not|doesn't|does not|didn't|did not|never|no longer|not|without|avoid\w*|"
    r"prevent\w*|fix\w*|solv\w*|resolv\w*|reduc\w*|instead|anymore|any more|"
    r"would|could|might|will|may|should|shall)\b|不再|没有|会不会|是否会"
)

_build_title = _build("device memory exhaustion", title=True)


def _person_oom(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not (_title(hit) or _head_title(hit)) or _DENIED.search(hit.text):
        return None
    return _build_title(row, hit, m)


_ANCHORS: tuple[Any, ...] = (
    b"ut of memory",
    b"UT OF MEMORY",
    b"ut-of-memory",
    b"ut of GPU memory",
    b"ut of gpu memory",
    b"ut of CUDA memory",
    b"ut of cuda memory",
    b"OOM",
    b"oom",
)

SIGNATURES = (
    Signature(
        "title: device oom in the first person",
        _PERSON_OOM,
        _person_oom,
        C.CUDA_OOM.code,
        tier=1,
        anchors=_ANCHORS,
        worth=(rb"(?i:out[- ]of[- ](?:\w+ )?memory|\boom\b)",),
        words=("out of memory", "out-of-memory", "oom", "out of gpu memory", "out of cuda memory"),
        anchor_from="the class's words, in any case: the anchors are their usual spellings",
        examples=("I get cuda oom when saving the final checkpoint", "We hit GPU OOM at step 100"),
    ),
)

parse = gated_reader(SIGNATURES)

"""A person's sentence, in a paste's prose, that says the run hit an out-of-memory error.

Threads about a device OOM often keep no traceback: the writer tells it ("I encountered a CUDA Out of Memory
error while running `bash main_grpo.sh` ... crashed during `loss.backward()`", "At a certain point (around
1000 iters) it OOMs, even with zero-3 offloading", "it just breakdown and return a OOM error"). Vocabulary
leaves such lines alone (its _PROSE: "I", "we", "my" mark a person's words, which mention OOM in settings and
plans as often as in reports), and its title rows read one short line only. Here the sentence itself must
report the event, by one of three shapes:

- a writer who met it: "I/we (also, still, keep) encountered / got / hit / ran into / am facing / see /
  receive (a, the, this) (CUDA) OOM / out of memory";
- the run as the subject of the verb "OOM": "it OOMs", "training OOMed", "the model still OOMs";
- a run that ended with it: "crashed / failed / died / stopped / broke down with (an) OOM", "returns /
  throws / raises / reports / gives (an) OOM / out-of-memory error".

Never read: a negation in the gap ("I didn't get OOM", "it never OOMs", "I got no OOM"), a condition, a plan
or a question of what would happen ("if it OOMs", "to avoid OOM", "whether it will OOM", "would get OOM"), and
a sentence that names the host's memory (the kernel's killer, RAM, CPU memory, the dataloader: those are
RUN121's), and a title alone (vocabulary's title rows read it). RUN101 at tier 1, behind any program's own
line; facts["read_as"] == "prose".
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# OOM as a noun, or "out of memory" / "out-of-memory" with the memory named ("out of GPU memory")
_OOM_NOUN = r"(?:(?:cuda|gpu|device|vram)\s+)?(?:oom|out[- ]of[- ](?:(?:gpu|cuda|device|vram)\s+)?memory)\b"
# a gap word that is no negation, modal or condition: "I also encountered", "we still keep getting"
_GAP_WORD = (
    r"(?!(?:not|never|no|would|could|might|may|will|shall|should|wouldn't|won't|can't)\b)(?!\w+n't\b)\w+\s+"
)
_MET = (
    r"encounter(?:ed|ing|s)?|got|get|gets|getting|hit|hits|hitting|ran into|run into|running into|"
    r"face[ds]?|facing|saw|see|seeing|receiv(?:e|ed|ing)|met|meet|meeting|experienc(?:e|ed|ing)"
)
_ARTICLE = r"(?:(?:an?|the|this|that|same|similar|another|cuda|gpu)\s+)*"
_PROSE_OOM = lazy_re.compile(
    r"(?i)"
    # a writer who met it
    rf"\b(?:i|we|i'm|we're|i've|we've)\s+(?:{_GAP_WORD}){{0,3}}?(?:{_MET})\s+{_ARTICLE}{_OOM_NOUN}|"
    # the run as the subject of the verb: "it OOMs", "training OOMed"
    r"\b(?:it|training|model|job|run|process|script|everything|which|that|this)\s+"
    r"(?:(?:still|always|eventually|immediately|quickly|then|just|also|sometimes|randomly|suddenly|"
    r"consistently|again)\s+)?oom(?:s|ed|'d|'s)\b|"
    # a run that ended with it, or a program that returned it
    r"\b(?:crash(?:es|ed)?|fail(?:s|ed)?|die[sd]|stop(?:s|ped)|abort(?:s|ed)|exit(?:s|ed)|broke|"
    r"break(?:s)?\s*down|breakdown|end(?:s|ed)?)\s+(?:\w+\s+){0,2}?with\s+" + _ARTICLE + _OOM_NOUN + "|"
    r"\b(?:return(?:s|ed)?|throw(?:s|n)?|threw|rais(?:e|es|ed)|report(?:s|ed)?|gives?|gave)\s+(?:me\s+)?"
    + _ARTICLE
    + _OOM_NOUN
    + r"\s+(?:error|exception)"
)
# a condition, plan or hypothesis before the match in its clause, or a negation after it
_HYPOTHETICAL = lazy_re.compile(
    r"(?i)\b(?:if|whether|unless|in case|avoid\w*|prevent\w*|without|would|could|might|will|may|should|"
    r"to not|not to|never|no|not|\w+n't)\b(?:(?!\bbut\b)[^.,;!?。，；！？])*\Z"
)
# the host's memory: the kernel's or a cgroup's killer, RAM, CPU memory, the loader's workers
_HOST = lazy_re.compile(
    r"(?i)\bkill|\bram\b|\bcpu\b|\bhost\b|system memory|shared memory|\bshm\b|swap|cgroup|dataloader|"
    r"\bjava|\bjvm|\bspark|executor|\bdisk\b|内存(?!不足)"
)


def _prose_oom(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    # a title alone is vocabulary's (its title rows read the device's OOM there, inferred_from "words")
    if _title(hit) or _HYPOTHETICAL.search(text, 0, m.start()) or _HOST.search(text):
        return None
    return [
        row.event(
            hit,
            f'the report says the run ran out of memory ("{m.group(0).strip()}"), in a person\'s words and '
            "without the program's own line: a device (GPU) out-of-memory error",
            {"inferred_from": "prose", "read_as": "prose"},
            tier=1,
            dedupe=(row.code, "oom_prose"),
        )
    ]


SIGNATURES = (
    Signature(
        "prose: the run ran out of memory",
        _PROSE_OOM,
        _prose_oom,
        C.CUDA_OOM.code,
        tier=1,
        anchors=(
            b"OOM",
            b"oom",
            b"Oom",
            b"ut of memory",
            b"ut Of Memory",
            b"UT OF MEMORY",
            b"ut-of-memory",
            b"ut of GPU memory",
            b"ut of gpu memory",
            b"ut of CUDA memory",
        ),
        worth=(rb"(?i:\boom|out[- ]of[- ](?:\w+ )?memory)",),
        words=("oom", "out of", "out-of-"),
        anchor_from="OOM or 'out of memory' in any case: the anchors are their usual spellings",
        examples=(
            "I encountered a CUDA Out of Memory error while running `bash main_grpo.sh` after 160 epochs.",
            "At a certain point (around 1000 iters) it OOMs, even with zero-3 offloading.",
            "but in fact it just breakdown and return a OOM error.",
        ),
    ),
)
parse = gated_reader(SIGNATURES)

"""A person's sentence, in a paste of more than a title, that says the ranks' meeting hangs or never lets the
training start.

meeting_titles.py reads a thread's title alone (one short line). Threads also say it in the prose around a
launch command or a cut log, and then no program line names the failure:

- the hang inside the meeting's call, as a writer tells what gdb or py-spy showed ("Looks like it hangs at
  the function call of `c10d::TCPStore::TCPStore(...)`, `c10d::tcputil::connect(...)`",
  https://github.com/pytorch/pytorch/issues/15638) or what the run did ("the program is stuck in
  init_process_group", "it freezes at dist.init_process_group"): the call is torch's
  init_process_group, the rendezvous, the TCPStore and its connect, or a trainer's wrapper named for them
  (meeting_titles' _INIT_CALL), and c10d's C++ names for them (c10d::TCPStore, tcputil::connect);
- a training on several nodes that never starts ("Multi-nodes and multi-gpu trainning never starts, 2
  machines have the same environment", https://github.com/Lightning-AI/pytorch-lightning/issues/14611; "the
  multi-node training does not start", "多机训练无法启动"): the launchers wait in the meeting for the other
  nodes, and nothing else holds every rank before the first step.

RUN221 at tier 1, behind any program's own line; facts["read_as"] == "prose". Never read: a program's record
(a timestamp, a level, a source location: vocabulary's _LOGGED), a hang after the call (hang_titles.py's), a
condition, a plan, a negation or a fix before the words in their clause ("if it hangs at init_process_group",
"no longer stuck in the rendezvous"), a how-to question, and a title alone (meeting_titles.py reads it).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.meeting_titles import _BEFORE_HANG, _HANG, _IN_CALL, _INIT_CALL
from pgdoctor.diagnose.rules.vocabulary import _ASKING, _GONE, _LOGGED, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# c10d's C++ names of the store and its connect, as a backtrace or gdb prints them
_CALL = rf"(?:c10d::)?(?:tcpstore::tcpstore|tcputil::connect)\b|{_INIT_CALL}"
# "hangs at the function call of `c10d::TCPStore`", "stuck in the call to init_process_group"
_CALL_OF = r"(?:(?:the\s+)?(?:function\s+)?call(?:s|ing)?\s+(?:of|to)\s+)?[`'\"]?"
_MEETING_HANG = lazy_re.compile(
    rf"(?i)\b(?:{_CALL})(?:\(\))?[`'\"]?{_BEFORE_HANG}(?:{_HANG})|"
    rf"(?:{_HANG}){_IN_CALL}(?:the\s+)?{_CALL_OF}(?:\w+::)*\b(?:{_CALL})"
)
_SEVERAL = (
    r"multi[- ]?nodes?|multiple nodes|several nodes|"
    r"(?:two|2|multiple|several) (?:machines|nodes|servers|hosts)|"
    r"multi[- ]?machines?|distributed|\bddp\b"
)
_NEVER_STARTS = (
    r"never starts?|does ?n[o']t start|did ?n[o']t start|won'?t start|can ?n[o']t start|cannot start|"
    r"fails? to start|failed to start|is not starting|not starting"
)
_START_FAILS = lazy_re.compile(
    rf"(?i)(?:{_SEVERAL})[^.;:!?()\[\]=\n。；：！？]{{0,40}}?\b(?:train\w*|run|job)\b"
    rf"[^.;:!?,()\[\]=\n。，；：！？]{{0,16}}?\b(?:{_NEVER_STARTS})|"
    r"多机(?:多卡)?训练.{0,8}?(?:无法启动|启动不了|起不来|不能启动|没有启动)"
)
# a condition, plan, negation or fix before the words in their clause
_ASIDE = lazy_re.compile(
    r"(?i)\b(?:if|whether|unless|in case|avoid\w*|prevent\w*|would|could|might|will|should|no|not|never|"
    r"no longer|to fix|fixed|solved|resolved|instead of)\b[^.;!?。；！？]*\Z"
)


def _prose(hit: Hit, m: re.Match[str]) -> bool:
    text = hit.text
    if _title(hit) or _LOGGED.search(text) or _ASKING.match(text) or _GONE.search(text):
        return False
    return not _ASIDE.search(text, 0, m.start())


def _event(row: Signature, hit: Hit, m: re.Match[str], named: str, kind: str) -> list[Event]:
    return [
        row.event(
            hit,
            f'the report says {named} ("{m.group(0).strip()}"): some rank never reached '
            "init_process_group / the rendezvous, or cannot reach MASTER_ADDR:MASTER_PORT",
            {"kind": kind, "inferred_from": "prose", "read_as": "prose"},
            tier=1,
            dedupe=(row.code, "meeting_prose"),
        )
    ]


def _meeting_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _prose(hit, m):
        return None
    return _event(row, hit, m, "the ranks' meeting hangs", "meeting_hang")


def _never_starts(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not (_prose(hit, m) or (_title(hit) and not _ASIDE.search(hit.text, 0, m.start()))):
        return None
    return _event(row, hit, m, "the training on several nodes never starts", "meeting_never_starts")


SIGNATURES = (
    Signature(
        "prose: the meeting hangs",
        _MEETING_HANG,
        _meeting_hang,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b" hang", b"Hang", b"HANG", b" hung", b"stuck", b"Stuck", b"reez"),
        worth=(rb"(?i:\bhang|\bhung\b|\bstuck\b|\bfreez)",),
        words=("hang", "hung", "stuck", "freez"),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "Looks like it hangs at the function call of `c10d::TCPStore::TCPStore(std::string const&, "
            "unsigned short, bool) ()`",
        ),
    ),
    Signature(
        "prose: the training on several nodes never starts",
        _START_FAILS,
        _never_starts,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"start", b"START", b"Start", "启动".encode(), "起不来".encode()),
        worth=(rb"(?i:start)", "启动".encode(), "起不来".encode()),
        words=("start", "启动", "起不来"),
        anchor_from="the verb 'start' (case aside) or its CJK words",
        examples=(
            "Multi-nodes and multi-gpu trainning never starts, 2 machines have the same environment",
            "多机多卡训练无法启动",
        ),
    ),
)
parse = gated_reader(SIGNATURES)

"""A thread's title (the whole paste, one short line: vocabulary's _title) that names the ranks' meeting as
what failed, in a person's words.

- The meeting hangs: the call that makes the process group - torch's init_process_group, the rendezvous, the
  TCPStore, or a trainer's wrapper named for it (guided-diffusion's dist_util.setup_dist, DeiT's
  init_distributed_mode, dist_init, distributed_init), or what it makes named with its making in a person's
  words ("initializing process group", "process group initialization", "distributed init") - with a hang
  word next to it, the hang in the call
  ("stuck in dist_util.setup_dist()", "hangs at dist.init_process_group", "rendezvous stuck forever"), not
  after it ("hangs after init_process_group", "init_process_group completes and then hangs": a collective
  that never completes is hang_titles.py's). RUN221 at tier 1.
- torch 1.x's TCPStore error in a title ("Multi nodes training exited with Socket Timeout", "DDP 训练后显示
  sockettimeout"): c10d's "Socket Timeout" is the store's own text, and every released title or one-line paste
  that says it (v11-v21) is a meeting that failed. RUN222 at tier 1, as rendezvous.py reads
  "RuntimeError: Socket Timeout".

Never read: a line with more than a title, a question or a request (vocabulary's _ASKING), a setting or a fix
(_TITLE_ASIDE: "socket timeout set to 30 seconds", "set timeout to avoid stuck init_process_group").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_INIT_CALL = (
    r"(?:\w+\.)*(?:init_process_group|rendezvous|rdzv\w*|tcpstore|(?:setup|init|initiali[sz]e)_?dist(?:ributed)?"
    r"(?:_\w+)?|dist_?init\w*|distributed_init\w*)\b|"
    # the same call in a person's words: what init_process_group makes, named with its making ("hangs when
    # initializing process group", "stuck at process group initialization", "hang during the initialization
    # of the distributed process group", "freezes at distributed init"); not DDP's or a model's initialization
    r"\binitiali[sz](?:e|es|ed|ing|ation)(?: of)? (?:the )?(?:default |distributed |torch )*"
    r"process ?groups?\b|"
    r"\bprocess ?groups? (?:init\w*|initiali[sz]ation|creation|set ?up)\b|"
    r"\b(?:torch\.)?distributed (?:init|initiali[sz]ation)\b"
)
_HANG = r"\bhang(?:s|ing|ed)?\b|\bhung\b|\bstuck\b|\bfreez(?:e|es|ing)\b"
# the hang in the call, not after it ("hangs after init_process_group", "setup_dist done, then stuck")
_IN_CALL = r"\s+(?:(?:in|at|on|inside|during|while|when|within|calling)\s+)+"
_BEFORE_HANG = (
    r"(?:(?!complet|finish|done|after|then|succe|return|pass)[^.;:!?,()\[\]=\n。，；：！？]){0,32}?"
)
_MEETING_HANG = lazy_re.compile(
    rf"(?i)\b(?:{_INIT_CALL})(?:\(\))?{_BEFORE_HANG}(?:{_HANG})|"
    rf"(?:{_HANG}){_IN_CALL}(?:the )?\b(?:{_INIT_CALL})"
)
_SOCKET_TIMEOUT = lazy_re.compile(r"(?i)socket ?timeout\b")
# A line that starts with another library's dotted exception type (requests.exceptions.ConnectionError:
# ...) is that library's error quoting the words, not a person's title about the store.
_OTHER_EXCEPTION = lazy_re.compile(r"^\s*(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*(?:Error|Exception)\b")


def _read(hit: Hit) -> bool:
    return _title(hit) and not _TITLE_ASIDE.search(hit.text)


def _title_event(row: Signature, hit: Hit, m: re.Match[str], named: str, then: str, kind: str) -> list[Event]:
    """The one event both title rows give: what the title names, what that means, its kind."""
    return [
        row.event(
            hit,
            f'the report names {named} ("{m.group(0)}"): {then}',
            {"kind": kind, "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "meeting_title"),
        )
    ]


def _meeting_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit):
        return None
    return _title_event(
        row,
        hit,
        m,
        "the ranks' meeting as what hangs",
        "some rank never reached init_process_group / the rendezvous, or cannot reach "
        "MASTER_ADDR:MASTER_PORT",
        "meeting_hang",
    )


def _socket_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit) or _OTHER_EXCEPTION.search(hit.text):
        return None
    return _title_event(
        row,
        hit,
        m,
        'the store\'s "Socket Timeout"',
        "a rank could not reach or hear from the TCPStore at MASTER_ADDR:MASTER_PORT while the ranks met",
        "store_socket_timeout",
    )


SIGNATURES = (
    Signature(
        "title: the meeting hangs",
        _MEETING_HANG,
        _meeting_hang,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b" hang", b"Hang", b"HANG", b" hung", b"stuck", b"Stuck", b"reez"),
        worth=(rb"(?i:\bhang|\bhung\b|\bstuck\b|\bfreez)",),
        words=("hang", "hung", "stuck", "freez"),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=("stuck in dist_util.setup_dist() when training", "init_process_group hangs forever"),
    ),
    Signature(
        "title: the store's socket timeout",
        _SOCKET_TIMEOUT,
        _socket_timeout,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"ocket Timeout", b"ocket timeout", b"ockettimeout", b"ocketTimeout", b"OCKET TIMEOUT"),
        worth=(rb"(?i:socket ?timeout)",),
        words=("socket timeout", "sockettimeout"),
        anchor_from="the store's words in their usual spellings (case aside)",
        examples=("Multi nodes training exited with Socket Timeout", "DDP 训练后显示 sockettimeout"),
    ),
)
parse = gated_reader(SIGNATURES)

"""rendezvous of an Ascend HCCL communicator: the root-info (topology exchange) server that every rank of a
new communicator connects to before any link is built, as NCCL's ranks meet through the c10d store.

Formats (CANN's hccl topoinfo_exchange_server.cc / topoinfo_exchange_agent.cc, plog lines "[ERROR]
HCCL(pid,proc):date [topoinfo_exchange_server.cc:314] [tid][InitGroupStage][RanktableDetect]..."; error code
EI0015 in the user's log): the server's "topo exchange server get socket timeout! timeout[120 s]" (older
"[Get][Connection]topo exchange server get socket timeout! timeout[120 s]", newer "errNo[0x...] topo exchange
server get socket timeout, listenPort[60000], elapsed[121 s] > timeout[120 s], identifier[...]" and "... get
socket timeout[120 s], expected[8] nodes, received[4] nodes"), then its roll-call "total connected num is
[4],line num is [1]" / "need connect rankNum is [8]" / "connected rankinfo[LINE 0]: [0000000000000000],...";
the agents' "TopoDetect ERROR occur !!! fault_type[1], fault_info["Failed to connect agent[1,3,5,7,]"]" and
"rank num[8]is different with rank list size[4] in total topo rank info."; an agent that never reached the
server: "topo exchange agent get socket timeout" (RUN222), or that waited for the rank table: "Wait timeout
for sockets recv". The ranks the server lacks did not start, crashed first, or cannot reach its
address/port (HCCL_IF_IP, HCCL_IF_BASE_PORT, a firewall): RUN221, their ranks named when the log names them.

The same start-up failing as its callers report it, without the server's record: HCCL's plog "[ERROR]
HCCL(36035,mindie_llm_backend_connector):... [op_base.cc:974][36818][Init][CommRootInfoConfig]
errNo[0x0000000005000002]HcclCommInitRootInfo failed." and the runners of MindIE / ATB "AllGatherHcclRunner:0
HcclCommInitRootInfo fail,
error:2, rank:1, rankSize:4" (the HcclResult after "error:", the low digits of errNo). The communicator of
the ranks never formed: the rendezvous of the group (RUN221), tier 2, so any record that says why (a rank
that crashed, a CANN error code) comes first.

The rank table of MindSpore / MindFormers jobs is built by hccl_tools.py from the device IPs that the
driver's `hccn_tool -i <dev> -ip -g` prints: "/bin/sh: 1: hccn_tool: not found" then "Failed to call
hccn_tool, try to read /etc/hccn.conf instead" and a KeyError when that file holds no address - the Ascend
driver tools are not installed or not on PATH (RUN263), not a Python bug.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_SERVER = lazy_re.compile(
    r"topo ?exchange server get socket timeout(?:! timeout\[(?P<t>\d+) ?s\]|\[(?P<t2>\d+) ?s\]|"
    r".{0,80}?timeout\[(?P<t3>\d+) ?s\])?|"
    r"TopoDetect ERROR occur.{0,80}Failed to connect agent\[(?P<agents>[\d,\s]*)\]|"
    r"rank num\[(?P<want>\d+)\] ?is different with rank list size\[(?P<got>\d+)\]"
)
_AGENT = lazy_re.compile(r"topo ?exchange agent get socket timeout|Wait timeout for sockets recv")
_EXPECTED = lazy_re.compile(
    r"need connect rankNum is \[(?P<n>\d+)\]|expected\[(?P<n2>\d+)\] nodes|rank num\[(?P<n3>\d+)\]"
)
_RECEIVED = lazy_re.compile(
    r"total connected num is \[(?P<n>\d+)\]|received\[(?P<n2>\d+)\] nodes|rank list size\[(?P<n3>\d+)\]"
)
_MISSING = lazy_re.compile(r"Failed to connect agent\[(?P<agents>[\d,\s]*)\]")


_INIT_FAILED = lazy_re.compile(
    r"errNo\[0x0*(?P<errno>[0-9a-fA-F]+)\]\s*HcclCommInitRootInfo\w* failed|"
    r"HcclCommInitRootInfo\w* fail(?:ed)?,? error:\s*(?P<num>\d+)(?:, rank:\s*(?P<rank>\d+))?"
    r"(?:, rankSize:\s*(?P<size>\d+))?"
)
_HCCN_TOOL = lazy_re.compile(r"hccn_tool: (?:command )?not found|Failed to call hccn_tool")


def _init_failed(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "hccl_comm_init", "backend": "hccl"}
    if m.group("num"):
        facts["hccl_error"] = int(m.group("num"))
    elif m.group("errno"):
        facts["hccl_error"] = int(m.group("errno"), 16) & 0xFFFF
    r = int(m.group("rank")) if m.group("rank") else hit.rank
    if m.group("size"):
        facts["world_size"] = int(m.group("size"))
    return [
        row.event(
            hit,
            f"{hit.who(r)}: HCCL's communicator set-up (HcclCommInitRootInfo) failed"
            + (f" with HcclResult {facts['hccl_error']}" if "hccl_error" in facts else "")
            + ": the ranks of the group did not all meet at the root (a rank that did not start or "
            "failed first, or HCCL_IF_IP / the root's port not reachable)",
            facts,
            rank=r,
            dedupe=(row.code, "hccl_rootinfo"),
        )
    ]


def _hccn_tool(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "hccn_tool (the Ascend driver's network tool) is not installed or not on PATH, so the rank table "
            "cannot get the devices' IP addresses: install the driver's tools or write /etc/hccn.conf",
            {"problem": "hccn_tool_missing", "backend": "hccl"},
            dedupe=(row.code, "hccn_tool"),
        )
    ]


def _first_int(pattern: re.Pattern[str], texts: list[str]) -> Optional[int]:
    for t in texts:
        m = pattern.search(t)
        if m:
            return int(next(g for g in m.groups() if g is not None))
    return None


def _near(hit: Hit) -> list[str]:
    return [ln.text for ln in [*hit.before(20, same_rank=False), hit.line, *hit.after(20, same_rank=False)]]


def _server(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = _near(hit)
    facts: dict[str, Any] = {"problem": "hccl_rootinfo", "backend": "hccl"}
    t = m.group("t") or m.group("t2") or m.group("t3")
    if t:
        facts["timeout_s"] = int(t)
    want, got = _first_int(_EXPECTED, near), _first_int(_RECEIVED, near)
    if want is not None:
        facts["expected_ranks"] = want
    if got is not None:
        facts["connected_ranks"] = got
    missing: list[int] = []
    for text in near:
        a = _MISSING.search(text)
        if a:
            missing = sorted({int(x) for x in re.findall(r"\d+", a.group("agents"))})
            break
    if missing:
        facts["ranks"] = missing
    count = f" ({got} of {want} ranks connected)" if want is not None and got is not None else ""
    who = f"; ranks that never connected: {', '.join(map(str, missing))}" if missing else ""
    return [
        row.event(
            hit,
            f"HCCL's communicator set-up timed out at its root-info server{count}: not every rank reached it "
            f"(they did not start, crashed first, or cannot reach its address and port){who}",
            facts,
            dedupe=(row.code, "hccl_rootinfo"),
        )
    ]


def _agent(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_SERVER.search(t) for t in _near(hit)):
        return []  # the server's record says more (who connected, who did not)
    return [
        row.event(
            hit,
            f"{hit.who()}: HCCL's communicator set-up could not reach the root-info server in time: the "
            "server rank did not start or failed first, or its address/port (HCCL_IF_IP, HCCL_IF_BASE_PORT) "
            "is not reachable",
            {"problem": "hccl_rootinfo_connect", "backend": "hccl"},
            dedupe=(row.code, "hccl_rootinfo"),
        )
    ]


SIGNATURES = (
    Signature(
        "hccl root-info server timeout",
        _SERVER,
        _server,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=1,
        anchors=(b"exchange server get socket timeout", b"TopoDetect ERROR", b"is different with rank list"),
        worth=(rb"exchange server get socket timeout", rb"TopoDetect ERROR", rb"is different with rank list"),
        words=("exchange server get socket timeout", "topodetect error", "is different with rank list"),
    ),
    Signature(
        "hccl root-info agent timeout",
        _AGENT,
        _agent,
        C.STORE_UNREACHABLE.code,
        tier=1,
        anchors=(b"exchange agent get socket timeout", b"Wait timeout for sockets recv"),
        worth=(rb"exchange agent get socket timeout", rb"Wait timeout for sockets recv"),
        words=("exchange agent get socket timeout", "wait timeout for sockets recv"),
    ),
    Signature(
        "hccl communicator init failed",
        _INIT_FAILED,
        _init_failed,
        C.RENDEZVOUS_TIMEOUT.code,
        tier=2,
        anchors=(b"CommInitRootInfo",),
        worth=(rb"CommInitRootInfo\w* fail",),
        words=("comminitrootinfo",),
    ),
    Signature(
        "hccn_tool missing",
        _HCCN_TOOL,
        _hccn_tool,
        C.LIBRARY_MISSING.code,
        tier=0,
        anchors=(b"hccn_tool",),
        worth=(rb"hccn_tool: (?:command )?not found", rb"Failed to call hccn_tool"),
        words=("hccn_tool",),
    ),
)
parse = gated_reader(SIGNATURES)

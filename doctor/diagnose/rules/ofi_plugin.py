"""NCCL's libfabric network plugin (aws-ofi-nccl, "NET/OFI") and the EFA provider under it: the WARNs that say
what failed between two nodes, read before the generic NET/OFI row of nccl_errors (which takes every other
NET/OFI failure as an RDMA transport error, RUN173).

Formats (read at the source: aws-ofi-nccl src/nccl_ofi_rdma.c / .cpp v1.7.4 to v1.21.1, libfabric prov/efa
efa_strerror.c v1.16-v1.20 and efa_errno.h v1.21+). Every plugin WARN is NCCL's logger line
"<host>:<pid>:<tid> [<dev>] <function>:<line> NCCL WARN NET/OFI <text>" (the C++ plugin, v1.14+, prints
__PRETTY_FUNCTION__: "accept_wait_for_connection(nccl_net_ofi_rdma_domain_t*, ...):4909 NCCL WARN NET/OFI
...").

- The peers disagree on their rails: "NET/OFI Unexpected number of remote rails for dev 3. Expected 4 but got
  2" (the connect message of the peer carries its number of rails, i.e. the EFA NICs behind that GPU's device;
  rdma protocol's accept and connect, every version since the rdma protocol came in, v1.7) and v1.13+'s
  "NET/OFI Unexpected number of remote control rails for dev %d. Expected %i but got %i". One node sees fewer
  EFA devices than the other (a NIC down or missing, mixed instance types) or the nodes run the plugin with
  different rail settings (OFI_NCCL_FORCE_NUM_RAILS, different plugin versions or topology files): RUN520.
- The plugin found fewer libfabric devices than it reported to NCCL: "NET/OFI Insufficient Libfabric devices
  found" (sendrecv protocol's init, v1.11+): the fabric under it is short of devices (RUN294, as a provider
  that is missing).
- A completion error whose EFA status says the peer's queue pair no longer exists: libfabric's
  FI_EFA_REMOTE_ERROR_BAD_DEST_QPN, printed "Invalid receiver queue pair number (QPN)" (1.16-1.21; 1.18-1.20
  add "This error is typically caused by a crashed peer. Please verify the peer application has not terminated
  unexpectedly."), "Bad queue pair (QP) number (QP does not exist or is in error state)" (1.22+), and 1.22+'s
  FI_EFA_ERR_PEER_ABORTED "Operation aborted because the peer closed its memory registration or endpoint
  mid-transfer", behind aws-ofi-nccl's "NET/OFI Request 0x... completed with error. RC: 5. Error: ..." or
  libfabric's own "<warn>" line. The peer's adapter answered, so the fabric works: the process that owned the
  queue pair is gone (it crashed or was killed, often by the OOM killer). A peer's death seen from here:
  RUN133 at tier 1, behind the peer's own error when the log has it.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_RAILS = lazy_re.compile(
    r"NET/OFI Unexpected number of remote (?P<ctrl>control )?rails for dev (?P<dev>\d+)\.?"
    r"(?: Expected (?P<want>\d+) but got (?P<got>\d+))?"
)


def _rails(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "plugin": "aws-ofi-nccl",
        "problem": "ofi_rail_mismatch",
        "net_dev": int(m.group("dev")),
        "nccl_warn": clip(hit.text[m.start() :], 200),
    }
    if m.group("ctrl"):
        facts["rail_kind"] = "control"
    said = ""
    if m.group("want"):
        facts.update(local_rails=int(m.group("want")), remote_rails=int(m.group("got")))
        said = f" (this node has {m.group('want')}, the peer {m.group('got')})"
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's libfabric plugin (aws-ofi-nccl) and a peer disagree on the number of "
            f"{'control ' if m.group('ctrl') else ''}rails of network device {m.group('dev')}{said}: one "
            "node sees fewer EFA devices than the other (a NIC down or missing, mixed instance types) or the "
            "nodes run the plugin with different settings (OFI_NCCL_FORCE_NUM_RAILS, plugin version, "
            "topology file); compare `fi_info -p efa` and the plugin's version on every node",
            facts,
            dedupe=(row.code, "rails"),
        )
    ]


_FEW_DEVICES = lazy_re.compile(r"NET/OFI Insufficient Libfabric devices found")


def _few_devices(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's libfabric plugin (aws-ofi-nccl) found fewer libfabric devices than it "
            "reported to NCCL: an EFA device is missing or down on this node, or FI_PROVIDER / the container "
            "hides some of them",
            {
                "plugin": "aws-ofi-nccl",
                "reason": "insufficient_devices",
                "nccl_warn": clip(hit.text[m.start() :], 200),
            },
            dedupe=(row.code,),
        )
    ]


_PEER_GONE = lazy_re.compile(
    r"(?P<err>Invalid receiver queue pair number \(QPN\)|"
    r"Bad queue pair \(QP\) number \(QP does not exist(?: or is in error state)?\)?|"
    r"peer closed its memory registration or endpoint mid-transfer)"
)
_PEER_ID = lazy_re.compile(r"Peer host id: (?P<id>[\w-]+)")


def _peer_gone(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "problem": "peer_process_gone",
        "fabric": "efa",
        "fabric_error": m.group("err"),
        "peer_may_have_died": True,
    }
    if "NET/OFI" in hit.text:
        facts["plugin"] = "aws-ofi-nccl"
    p = _PEER_ID.search(hit.text)
    if p:
        facts["peer_host_id"] = p.group("id").rstrip(".")
    at = f" (instance {facts['peer_host_id']})" if "peer_host_id" in facts else ""
    return [
        row.event(
            hit,
            f"{hit.who()}: the EFA adapter of a peer{at} answered that its queue pair no longer exists "
            f"({m.group('err')}): the fabric works, the peer process is gone - it crashed or was killed (the "
            "OOM killer, a container memory limit) first; that rank's own log and dmesg say why",
            facts,
            dedupe=(row.code, "efa_peer_gone"),
        )
    ]


# The C++ plugin (v1.14+) catches an exception at its API entry points and prints it: "NET/OFI Caught
# exception in plugin init: <what>" (also rdma_init, sendrecv_init: the plugin did not come up, RUN294 as a
# provider that is missing) or "... in plugin listen / connect / accept: <what>" (a connection over the
# fabric failed, RUN173); the TCP provider's "NET/OFI No viable endpoint found for TCP provider. Try and
# relax the filters using OFI_NCCL_USE_IPV6_TCP or OFI_NCCL_EXCLUDE_TCP_IF environment variables" (v1.13+, no
# interface passed its filters: RUN294). GIN's exceptions (NCCL 2.28's device API) are not read.
_CAUGHT = lazy_re.compile(
    r"NET/OFI (?:Caught exception in (?P<where>plugin init|rdma_init|sendrecv_init|plugin (?:listen|connect|"
    r"accept)): (?P<what>.*)|No viable endpoint found for TCP provider)"
)


def _caught(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    where = m.group("where") or "tcp endpoint"
    init = not where.startswith("plugin ") or where == "plugin init"
    code = C.NCCL_NET_PROVIDER_MISSING if init or where == "tcp endpoint" else C.NCCL_IB_ERROR
    what = (
        f"failed to initialize ({clip(m.group('what') or '', 120)})"
        if m.group("what") is not None and init
        else f"failed in {where[7:]} ({clip(m.group('what') or '', 120)})"
        if m.group("what") is not None
        else "found no endpoint for its TCP provider (no interface passed the OFI_NCCL_EXCLUDE_TCP_IF / "
        "OFI_NCCL_USE_IPV6_TCP filters)"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: NCCL's libfabric plugin (aws-ofi-nccl) {what}",
            {"plugin": "aws-ofi-nccl", "ofi_stage": where, "nccl_warn": clip(hit.text[m.start() :], 200)},
            code=code.code,
            dedupe=(code.code, "ofi_caught", where),
        )
    ]


# A completion error of the plugin's own completion queue, in its text without NCCL's logger prefix:
# torch's "Last error:" under ncclRemoteError / ncclSystemError keeps the WARN's text alone ("NET/OFI
# Request 0x7f14cc5b60c0 completed with error. RC: 113. Error: 2 (UNDELIVERABLE). Completed length: 0",
# NVIDIA/nccl#1928). Formats (aws-ofi-nccl, src/nccl_ofi_net.c / nccl_ofi_sendrecv / nccl_ofi_rdma / cm /
# gin): up to v1.5 "Request completed with error. RC: %d. Error: %s", v1.6+ "Request %p completed with
# error. RC: %d. Error: %d (%s). Completed length: %ld[, Request: %s]", the rdma protocol's "Request %p seq
# %d completed with error. ..." and "Unable to read from fi_cq_readerr. RC: %zd. Error: %s". A transfer over
# the fabric failed: RUN173, like the
# same text behind "NCCL WARN" (read by the WARN rows, so a WARN line is left to them here). The statuses that
# say the peer's queue pair is gone are _PEER_GONE's.
_COMPLETION = lazy_re.compile(
    r"(?<!WARN )NET/OFI (?:Request (?:0x[0-9a-fA-F]+ |\(nil\) )?(?:seq \d+ )?completed with error\. "
    r"RC: (?P<rc>-?\d+)\. Error: (?P<err>[^.]*(?:\.\d+[^.]*)?)|"
    r"Unable to read from fi_cq_readerr\. RC: (?P<rc2>-?\d+)\. Error: (?P<err2>.*))"
)


def _completion(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "NCCL WARN" in hit.text or _PEER_GONE.search(hit.text):
        return None
    rc = int(m.group("rc") or m.group("rc2"))
    err = clip((m.group("err") or m.group("err2") or "").strip(), 120)
    return [
        row.event(
            hit,
            f"{hit.who()}: a transfer over NCCL's libfabric plugin (aws-ofi-nccl, EFA) completed with an "
            f"error (RC {rc}: {err}): the fabric between the nodes failed the request",
            {
                "plugin": "aws-ofi-nccl",
                "ofi_rc": rc,
                "fabric_error": err,
                "nccl_warn": clip(hit.text[m.start() :], 200),
            },
            dedupe=(row.code, "ofi_completion"),
        )
    ]


SIGNATURES = (
    Signature(
        "aws-ofi-nccl remote rail count",
        _RAILS,
        _rails,
        C.NCCL_OFI_RAIL_MISMATCH.code,
        anchors=(b"NET/OFI Unexpected number of remote",),
        words=("unexpected number of remote",),
    ),
    Signature(
        "aws-ofi-nccl too few devices",
        _FEW_DEVICES,
        _few_devices,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"NET/OFI Insufficient Libfabric devices found",),
        words=("insufficient libfabric devices",),
    ),
    Signature(
        "aws-ofi-nccl exception or no tcp endpoint",
        _CAUGHT,
        _caught,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"NET/OFI Caught exception in ", b"NET/OFI No viable endpoint found for TCP provider"),
        words=("net/ofi caught exception in", "no viable endpoint found for tcp"),
    ),
    Signature(
        "efa peer queue pair gone",
        _PEER_GONE,
        _peer_gone,
        C.RANK_EXITED.code,
        tier=1,
        anchors=(
            b"Invalid receiver queue pair number",
            b"Bad queue pair (QP) number",
            b"peer closed its memory registration or endpoint",
        ),
        words=("invalid receiver queue pair", "bad queue pair", "peer closed its memory registration"),
    ),
    Signature(
        "aws-ofi-nccl completion error without the logger's prefix",
        _COMPLETION,
        _completion,
        C.NCCL_IB_ERROR.code,
        anchors=(b"NET/OFI Request", b"NET/OFI Unable to read from fi_cq_readerr"),
        words=("net/ofi request", "fi_cq_readerr"),
    ),
)
parse = gated_reader(SIGNATURES)

"""Which network NCCL chose, and how many nodes the job spans: observations, not failures.

Read at the source, across releases (NVIDIA/nccl 2.4-2.29):
- src/transport/net_socket.cc: "NET/Socket : Using [0]eth0:10.0.0.1<0> [1]eth1:..." (INFO, printed
  when the socket transport is initialised: NCCL_NET=Socket, or IB found nothing usable);
- src/init.cc (2.7+): "Using network Socket" / "Using network IB" / a plugin's name;
- src/transport/net_ib.cc (net_ib/init.cc since 2.26): "NET/IB : No device found." ("NET/IB :
  Using [0]mlx5_0:1/IB ..." when it found one is not read: since 2.19 IB is initialised, and says
  so, even when NCCL_NET=Socket then picks the socket transport, so only "Using network" decides);
- src/misc/ibvwrap.cc: "Failed to open libibverbs.so[.1]" (a WARN up to 2.11, an INFO since 2.12):
  no verbs library in this host or container, so no IB at all;
- src/net.cc / plugin loader: "NET/Plugin : No plugin found (libnccl-net.so), using internal
  implementation" (2.7-2.18, 2.19 with "dlerror=... " before it), "NET/Plugin: No plugin found
  (libnccl-net.so)" (2.20-2.22), "NET/Plugin: Could not find: libnccl-net.so. Using internal
  network plugin." (2.23+);
- src/misc/param.cc: "NCCL_IB_DISABLE set by environment to 1." / "NCCL_NET set by environment to
  Socket." (the fallback was asked for);
- src/init.cc (2.21+): "comm 0x... rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0".
The job's node count also comes from its launcher: torchrun's "--nnodes=2" (also "2:4", the
minimum counts) and its launch-config print "min_nodes : 2", srun's "--nodes=2" / "-N 2", and
SLURM_NNODES / SLURM_JOB_NUM_NODES printed by a job script.

Each line becomes an event of code OBSERVED with a `kind` fact; `pgdoctor.diagnose.transport`
judges them together, for the whole job (a socket fallback matters only when the ranks span
several hosts), and they never reach the root-cause analysis.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import joblogs as C
from pgdoctor.checks.codes import run as R
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.launch_start import DROPPED_ADDR_ROW, LOOPBACK_STORE, loopback_store
from pgdoctor.diagnose.rules.net_texts import USING, virtual_iface
from pgdoctor.diagnose.rules.rdzv_setup import PATH_ADDR_ROW
from pgdoctor.diagnose.signature import Build, Signature, gated_reader
from pgdoctor.model import lazy_re

OBSERVED = "observed"

_SOCKET_IFS = lazy_re.compile(r"NET/Socket : Using((?: \[\d+\][\w.:-]+:[^\s<]+<\d+>)+)")
_USING_NET = lazy_re.compile(r"NCCL INFO Using network (\S.*?)\.?\s*$")
_IB_NONE = lazy_re.compile(r"NET/IB : No device found")
_NO_VERBS = lazy_re.compile(r"Failed to open libibverbs\.so")
_NO_PLUGIN = lazy_re.compile(
    r"NET/Plugin ?: (?:dlerror=.*)?No plugin found|NET/Plugin: Could not find: ?\S*libnccl-net"
)
_ENV_OFF = lazy_re.compile(
    r"\b(NCCL_IB_DISABLE set by environment to 1|NCCL_NET set by environment to Socket)\b"
)
_NNODES_NCCL = lazy_re.compile(r"\bnRanks \d+ nNodes (\d+)\b")
_NNODES_LAUNCH = lazy_re.compile(
    r"--nnodes[= ](\d+)|\bmin_nodes\s*:\s*(\d+)|--nodes[= ](\d+)\b|"
    r"\bSLURM_NNODES=(\d+)|\bSLURM_JOB_NUM_NODES=(\d+)"
)

# A launcher's error that quotes the command it could not run ("Error: failed to run torchrun --nnodes=2 ...
# on 10.0.0.2, is localhost: False, exception: ..."): the failure rows read it, not the node count.
_LAUNCH_ERROR = lazy_re.compile(r"\bfailed to (?:run|launch|start) ")


def _observe(kind: str) -> Build:
    """A build that records the line as an observation of `kind`, with the facts of its match."""

    def build(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
        facts: dict[str, Any] = {"kind": kind}
        if kind == "socket":
            facts["interfaces"] = re.findall(r"\](\w[\w.-]*):", m.group(1))
        elif kind == "network":
            facts["network"] = m.group(1)
        elif kind == "env_off":
            facts["setting"] = m.group(1)
        elif kind == "nodes":
            if "in Lightning, but" in hit.text:
                return None  # Lightning's complaint that SLURM's --nodes is not its num_nodes: rdzv_config's
            if _LAUNCH_ERROR.search(hit.text):
                return None  # a launcher's error quoting the command (ColossalAI's): remote_launch's line
            facts["nodes"] = int(next(g for g in m.groups() if g is not None))
            facts["nodes_from"] = "nccl" if m.re == _NNODES_NCCL else "launcher"
        return [row.event(hit, hit.text.strip(), facts, code=OBSERVED, dedupe=(OBSERVED, kind, hit.line.no))]

    return build


def _row(
    name: str, pattern: re.Pattern[str], kind: str, anchors: tuple[bytes, ...], worth: bytes
) -> Signature:
    return Signature(
        name,
        pattern,
        _observe(kind),
        C.NCCL_SOCKET_FALLBACK.code,
        tier=3,
        anchors=anchors,
        worth=(worth,),
        words=tuple(a.decode().lower() for a in anchors),
    )


SIGNATURES = (
    # before the observation: the same line naming docker bridges / veth pairs in a log that ends
    # before the communicator came up is a failure's symptom (net_texts.virtual_iface)
    Signature(
        "nccl socket on virtual interfaces",
        USING,
        virtual_iface,
        R.NCCL_SOCKET_ERROR.code,
        tier=1,
        anchors=(b"NET/Socket : Using", b"Bootstrap : Using", b"NET : Using"),
        worth=(rb"(?:NET/Socket|Bootstrap|NET) : Using",),
        words=(" : using",),
    ),
    _row("nccl socket transport", _SOCKET_IFS, "socket", (b"NET/Socket : Using",), rb"NET/Socket : Using"),
    _row("nccl network chosen", _USING_NET, "network", (b"Using network ",), rb"NCCL INFO Using network "),
    _row("nccl ib none", _IB_NONE, "no_ib_device", (b"NET/IB : No device",), rb"NET/IB : No device"),
    _row("nccl no verbs", _NO_VERBS, "no_libibverbs", (b"libibverbs",), rb"open libibverbs"),
    _row("nccl no net plugin", _NO_PLUGIN, "no_net_plugin", (b"NET/Plugin",), rb"NET/Plugin ?: "),
    _row("nccl net off by env", _ENV_OFF, "env_off", (b"set by environment to",), rb"set by environment to"),
    _row("nccl node count", _NNODES_NCCL, "nodes", (b"nNodes",), rb"nRanks \d+ nNodes \d"),
    # before the node count's observation of the same command line: launch_start's reading of a multi-node
    # launch whose store address is the loopback (its log ends at the launcher's banner)
    Signature(
        "multi-node launch with a loopback store address",
        LOOPBACK_STORE,
        loopback_store,
        R.RENDEZVOUS_TIMEOUT.code,
        anchors=(b"--master-addr", b"--master_addr", b"--rdzv-endpoint", b"--rdzv_endpoint"),
        worth=(rb"--(?:master[-_]addr|rdzv[-_]endpoint)[= ]+['\"]?(?:127\.|localhost|::1|\[::1\])",),
        words=("--master", "--rdzv"),
    ),
    # and a master address that is a path or URL (rdzv_setup.py: DeepSpeed's runner given a login script's
    # echo)
    PATH_ADDR_ROW,
    # and a launch for several nodes whose master address torchrun dropped (launch_start.py)
    DROPPED_ADDR_ROW,
    _row(
        "launcher node count",
        _NNODES_LAUNCH,
        "nodes",
        (b"--nnodes", b"min_nodes", b"--nodes", b"SLURM_NNODES=", b"SLURM_JOB_NUM_NODES="),
        rb"--nnodes[= ]\d|min_nodes\s*:\s*\d|--nodes[= ]\d|SLURM_(?:NNODES|JOB_NUM_NODES)=\d",
    ),
)
parse = gated_reader(SIGNATURES)

"""Horovod's own words for a job that could not start or whose ranks disagree, read at source (horovod
0.28.1 sdist, the last release; the same strings since 0.19):

- horovod/runner/common/service/driver_service.py and util/network.py (horovodrun, horovod.spark, Ray's
  Horovod): "Horovod was unable to connect to horovod driver service on any of the following addresses:
  {'lo': [...], 'eth0': [...]}." - no interface the task can route to the driver (RUN222, as the
  runner's KV store; a traceback cut after its last frame, network.py's BasicClient.__init__ at the raise's
  source line "'Linux.'.format(service_name=service_name, addresses=addresses))" under "Launching horovod
  task function was not successful:", is the same raise); "Unable to find a set of common task-to-task
  communication interfaces: [...]" - the hosts share no routable interface (RUN174: the ranks cannot reach
  each other).
- horovod/common/operations.cc: "Horovod could not be initialized: Different ranks tried to set up
  mismatching numbers of process sets" - the ranks passed different process_sets to hvd.init (RUN201).
- horovod/common/basics.py: "Horovod has not been initialized; use hvd.init()." - a rank called Horovod
  before (or without) hvd.init (RUN224, as torch's "Default process group has not been initialized");
  "Horovod has not been built with MPI support. Ensure MPI is installed and reinstall Horovod with
  HOROVOD_WITH_MPI=1", horovod/common/util.py's "Extension horovod.torch has not been built: ... If this is
  not expected, reinstall Horovod with HOROVOD_WITH_PYTORCH=1" - the build lacks the piece (RUN263).
- horovod/runner/launch.py: "ssh not successful for host worker-1:" (with ssh's output after it) and
  "RuntimeError: could not connect to some hosts via ssh" - horovodrun checks every remote host with ssh
  before it starts them (RUN303, as the other launchers' ssh check).
Healthy lines stay silent: operations.cc's "WARNING: Using different number of ranks per node might cause
performance loss ..." holds none of these.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_DRIVER = lazy_re.compile(
    r"Horovod was unable to connect to (?P<svc>[\w #.-]+?) on any of the following addresses:\s*(?P<addr>.*)"
)


def _driver(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    svc = m.group("svc").strip()
    facts = {"framework": "horovod", "problem": "horovod_service_unreachable", "service": svc}
    return [
        row.event(
            hit,
            f"{hit.who()}: Horovod could not reach its {svc} on any of the driver's interfaces "
            f"({clip(m.group('addr').strip(), 120)}): the hosts need a routable interface with the same "
            "name (pick it with --network-interface / HOROVOD_GLOO_IFACE) and the ports open between them",
            facts,
            dedupe=(row.code, "horovod_driver"),
        )
    ]


# The raise's source line in a traceback cut before the exception line (horovod 0.16-0.28 network.py).
_DRIVER_RAISE = lazy_re.compile(r"\.format\(service_name=service_name,\s*addresses=addresses\)")
_NETWORK_FRAME = lazy_re.compile(r'horovod/run(?:ner)?/common/util/network\.py", line \d+, in __init__')


def _driver_raise(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_NETWORK_FRAME.search(ln.text) for ln in hit.before(2, same_rank=False)):
        return None
    if any("Horovod was unable to connect" in ln.text for ln in hit.after(6, same_rank=False)):
        return []  # the exception line is there: its own row reads it
    svc = (
        "driver service"
        if "driver" in " ".join(ln.text for ln in hit.before(12, same_rank=False))
        else "service"
    )
    facts = {"framework": "horovod", "problem": "horovod_service_unreachable", "service": svc, "cut": True}
    return [
        row.event(
            hit,
            f"{hit.who()}: Horovod's client gave up on its {svc} (network.py raises 'unable to connect to "
            "... on any of the following addresses' there; the exception line is cut): no interface the "
            "task can route to the driver; pick one that all hosts share with --network-interface / "
            "HOROVOD_GLOO_IFACE and open the ports between them",
            facts,
            dedupe=(row.code, "horovod_driver"),
        )
    ]


_NO_COMMON_IFACE = lazy_re.compile(
    r"Unable to find a set of common task-to-task communication interfaces:?\s*(?P<ifaces>.*)"
)


def _no_common_iface(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = {"framework": "horovod", "problem": "no_common_interface"}
    return [
        row.event(
            hit,
            f"{hit.who()}: Horovod's tasks found no network interface through which every host reaches "
            f"every other ({clip(m.group('ifaces').strip(), 120)}): a firewall or different interface names "
            "between hosts; name one with --network-interface",
            facts,
            dedupe=(row.code, "horovod_iface"),
        )
    ]


_PS_MISMATCH = lazy_re.compile(
    r"Horovod could not be initialized: Different ranks tried to set up mismatching numbers of process sets"
)


def _ps_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: hvd.init got different process_sets on different ranks: every rank must pass "
            "the same list (or use dynamic process sets)",
            {"framework": "horovod", "problem": "process_sets_mismatch", "op": "hvd.init"},
            dedupe=(row.code, "horovod_ps"),
        )
    ]


_NOT_INIT = lazy_re.compile(r"Horovod has not been initialized; use hvd\.init\(\)")


def _not_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: Horovod was used before hvd.init() (or in a process that never called it, e.g. "
            "a DataLoader worker or a spawned child)",
            {"framework": "horovod", "problem": "not_initialized"},
            dedupe=(row.code, "horovod_init"),
        )
    ]


_NOT_BUILT = lazy_re.compile(
    r"Horovod has not been built with (?P<what>MPI) support|"
    r"Extension (?P<ext>horovod\.\w+) has not been built"
)


def _not_built(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what") or m.group("ext")
    return [
        row.event(
            hit,
            f"{hit.who()}: this Horovod build lacks {what}: it was compiled without it (a missing MPI / "
            "framework at build time); reinstall with HOROVOD_WITH_MPI=1 / HOROVOD_WITH_PYTORCH=1 "
            "(pip install --no-cache-dir) and check `horovodrun --check-build`",
            {"framework": "horovod", "problem": "horovod_not_built", "missing": what},
            dedupe=(row.code, "horovod_build"),
        )
    ]


_SSH = lazy_re.compile(
    r"could not connect to some hosts via ssh|ssh not successful for host (?P<host>[\w.:-]+?):?\s*$"
)


def _ssh(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, object] = {
        "framework": "horovod",
        "problem": "ssh_check_failed",
        "launcher": "horovodrun",
    }
    if m.group("host"):
        facts["host"] = m.group("host")
    where = f" ({m.group('host')})" if m.group("host") else ""
    return [
        row.event(
            hit,
            f"horovodrun could not ssh into a remote host{where} before starting the ranks: set up "
            "passwordless ssh (keys, known_hosts, -p / --ssh-port) from the launching host to every host",
            facts,
            dedupe=(row.code, "horovod_ssh"),
        )
    ]


SIGNATURES = (
    Signature(
        "horovodrun ssh check",
        _SSH,
        _ssh,
        C.REMOTE_LAUNCH_FAILED.code,
        anchors=(b"hosts via ssh", b"ssh not successful for host"),
        worth=(rb"could not connect to some hosts via ssh", rb"ssh not successful for host"),
        words=("hosts via ssh", "ssh not successful for host"),
    ),
    Signature(
        "horovod driver service unreachable",
        _DRIVER,
        _driver,
        C.STORE_UNREACHABLE.code,
        anchors=(b"Horovod was unable to connect to",),
        worth=(rb"Horovod was unable to connect to",),
        words=("horovod was unable to connect to",),
    ),
    Signature(
        "horovod driver service unreachable, cut at the raise",
        _DRIVER_RAISE,
        _driver_raise,
        C.STORE_UNREACHABLE.code,
        anchors=(b"format(service_name=service_name",),
        worth=(rb"format\(service_name=service_name",),
        words=("format(service_name=service_name",),
    ),
    Signature(
        "horovod no common interface",
        _NO_COMMON_IFACE,
        _no_common_iface,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"common task-to-task communication interfaces",),
        worth=(rb"common task-to-task communication interfaces",),
        words=("common task-to-task communication interfaces",),
    ),
    Signature(
        "horovod process sets mismatch",
        _PS_MISMATCH,
        _ps_mismatch,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"mismatching numbers of process sets",),
        worth=(rb"mismatching numbers of process sets",),
        words=("mismatching numbers of process sets",),
    ),
    Signature(
        "horovod not initialized",
        _NOT_INIT,
        _not_init,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"Horovod has not been initialized",),
        worth=(rb"Horovod has not been initialized; use hvd",),
        words=("horovod has not been initialized",),
    ),
    Signature(
        "horovod not built with",
        _NOT_BUILT,
        _not_built,
        C.LIBRARY_MISSING.code,
        anchors=(b"has not been built",),
        worth=(rb"Horovod has not been built with", rb"Extension horovod\.\w+ has not been built"),
        words=("has not been built",),
    ),
)
parse = gated_reader(SIGNATURES)

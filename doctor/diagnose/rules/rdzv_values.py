"""rendezvous and gloo set-up, the values the meeting is built from: a port or address that does not parse or
resolve before any rank talks, an etcd rendezvous server that answers with its own error, the Kubeflow
training-operator's init container that never resolved the master's name, and gloo's device that found no
interface for the address the host name resolved to. Read at their source:

- torch/distributed/rendezvous.py (1.x-2.x) `_env_rendezvous_handler`: ``master_port =
  int(_get_env_or_raise("MASTER_PORT"))`` raises Python's "ValueError: invalid literal for int() with base 10:
  'tcp://10.0.0.1:29500'" when MASTER_PORT holds a URL, a name or an unexpanded "$PORT"; the tcp:// handler
  reads the port through urllib.parse ("ValueError: Port could not be cast to integer value as '29500abc'",
  "ValueError: Port out of range 0-65535", Python 3.6+ lib/urllib/parse.py); a port past 65535 handed to a
  socket says "OverflowError: getsockaddrarg: port must be 0-65535." (Modules/socketmodule.c); TCPStore's
  pybind constructor given a str port says "TypeError: __init__(): incompatible constructor arguments" and
  then lists "torch._C._distributed_c10d.TCPStore(host_name: str, port: int, ...)". These are RUN224 (the
  rendezvous settings, not the network) when a frame or a line near them names the rendezvous or the port.
- torchrun / torch.distributed.launch (run.py, launch.py argparse): "error: argument --master_port/
  --master-port: invalid int value: '$MASTER_PORT'" (and --node_rank / --node-rank): RUN224.
- python-etcd (etcd/__init__.py EtcdError table, used by torch/distributed/elastic/rendezvous/
  etcd_rendezvous.py and etcd_store.py): "etcd.EtcdException: Raft Internal Error : etcdserver: request timed
  out", "During Leader Election", "EtcdLeaderElectionInProgress", "etcdserver: server stopped" / "etcdserver:
  no leader": the etcd server behind --rdzv-backend=etcd cannot serve the rendezvous (RUN222); its
  "etcd.EtcdKeyNotFound: Key not found : /torch/elastic/store" on torch's own keys is a server that does not
  serve the v2 API they are kept in (etcd 3.4+ without --enable-v2), RUN222 at tier 1.
- Caffe2's store handlers (caffe2/distributed/redis_store_handler.cc, file_store_handler.cc) under the
  CreateCommonWorld operator: "[enforce fail at redis_store_handler.cc:44] reply->type ==
  REDIS_REPLY_INTEGER. 6 vs 3" - redis answered with an error reply (RUN222); "Value at X was already set
  (perhaps you reused a run ID you have used before?)" - a run ID or shard id reused (RUN224).
- FAIR's submitit launch scripts (DeiT, MAE, ConvNeXt, DINO run_with_submitit.py get_shared_folder):
  "RuntimeError: No shared folder available" - no folder for the file:// init file (RUN224).
- kubeflow/training-operator pkg/controller.v1/pytorch/initcontainer.go: the worker pods' init container
  ``for i in $(seq N); do if nslookup <master>; then ...; fi; echo waiting for master; sleep 2; done``
  prints busybox's "nslookup: can't resolve '<job>-master-0'" (or "** server can't find ...: NXDOMAIN")
  then "waiting for master": a paste that ends in that loop is a worker whose master's service name never
  resolved (its pod not up, another namespace, a DNS policy that hides it): RUN222. launch_start.py reads
  the same lines when the launcher's failure follows them. The same wait as Kubernetes shows it: the
  kubelet's event "Back-off restarting failed container init-pytorch in pod <job>-worker-0_<ns>(<uid>)"
  (the loop's "exit $err" after MaxTries, trainer v1.7+; other operators name theirs "wait-for-master"),
  kubectl get pods' "<job>-worker-0   0/1   Init:CrashLoopBackOff" / "Init:Error" / "Init:0/1", and kubectl
  logs' 'container "pytorch" in pod "<job>-worker-0" is waiting to start: PodInitializing' (a worker pod
  still in that init container): RUN222, the master's name never resolved for the worker.
- torch/distributed/rendezvous.py's "environment variable RANK expected, but not set" read alone (its lead
  "Error initializing torch.distributed using env:// rendezvous:" broken onto the line before, or cut off):
  RUN224, as rdzv_config.py reads the whole message.
- a log that ends at the process group's start: Lightning's (fabric/utilities/distributed.py
  _init_dist_connection, 1.x "initializing ddp: GLOBAL_RANK: 0, MEMBER: 1/4", 1.6+ "Initializing distributed:
  ...") logs the line, calls init_process_group, then rank 0 logs "All distributed processes registered.
  Starting with N processes"; torch 1.8-2.0 _store_based_barrier logs "Added key: store_based_barrier_key:1 to
  store for rank: 0" then "Rank 0: Completed store-based barrier for key:... with N nodes." A log whose last
  lines are the first without the second (and no step after) hung in the rendezvous: some rank never joined
  (RUN221, tier 1: a timeout that was not waited out). DeepSpeed's comm.init_distributed logs "Initializing
  TorchBackend in DeepSpeed with backend nccl" (0.7+; 0.3-0.6 "Initializing torch distributed with backend:
  nccl") right before init_process_group: a log whose last lines are that and other ranks' records of the
  same init_distributed ("cdb=None"), nothing else, hung there too (RLHFlow Online-RLHF: accelerate's
  main_process_port: 0; the line alone is a healthy record). Lines that frameworks print once
  init_process_group returned (timm's "Training in distributed mode ...") say the meeting was over.
  Lightning's line counts only with rank 0's among them (only rank 0 says it is over) and some rank of the
  world not announced (all of them there: the meeting had everyone).
- DDP's forward (torch/nn/parallel/distributed.py 1.8-2.x _pre_forward / forward: ``if
  torch.is_grad_enabled() and self.reducer._rebuild_buckets():``): reducer.cpp Reducer::rebuild_buckets
  begins with ensure_prior_reduction_finished(), which raises "Expected to have finished reduction in the
  prior iteration before starting a new one" (the unused-parameter error), and otherwise only its
  parameter-order check. A paste whose stack ends at that source line, its exception line cut off (a rich
  traceback box, an issue body that stops there), is that desync (RUN202, tier 1).
- gloo/transport/tcp/device.cc (2018-2025) sockaddrToInterfaceName: "[enforce fail at .../device.cc:NNN]
  ifa != nullptr. Unable to find interface for: [127.0.1.1]" - the host name resolved to an address no
  interface holds (Debian's /etc/hosts 127.0.1.1, a stale /etc/hosts entry): set GLOO_SOCKET_IFNAME (RUN174).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import LINES_AFTER, Event, Hit
from pgdoctor.diagnose.rules.interrupted_waits import before_hand_stop
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.diagnose.text.normalize import Line
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.progress import is_progress
from pgdoctor.knowledge.ranks import missing_ranks, rank_ranges
from pgdoctor.model import lazy_re

# Python's and urllib's and the socket module's words for a port that does not parse.
_PORT_PARSE = lazy_re.compile(
    r"(?P<exc>ValueError|OverflowError): (?:"
    r"invalid literal for int\(\) with base 10: '(?P<lit>[^']{0,200})'|"
    r"Port could not be cast to integer value as '(?P<cast>[^']{0,200})'|"
    r"(?P<range>Port out of range 0-65535)|"
    r"(?:getsockaddrarg: )?(?P<range2>port must be 0-65535)"
    r")"
)
# What makes such a line the rendezvous's: a frame of torch's rendezvous or launcher, or the port's own name.
# Not elastic's @record wrapper frame nor distributed_c10d.py in general: a script's own int() under them is
# the script's.
_RDZV_CONTEXT = lazy_re.compile(
    r"torch/distributed/(?:rendezvous\.py|run\.py|launch\.py|elastic/rendezvous/)|"
    r"_env_rendezvous_handler|_tcp_rendezvous_handler|_create_c10d_store|TCPStore\(|"
    r"MASTER_PORT|master_port|init_method|rdzv_endpoint"
)
# TCPStore's pybind11 constructor refusing its arguments (a str port, a None host).
_TCPSTORE_ARGS = lazy_re.compile(r"TypeError: __init__\(\): incompatible constructor arguments")
# torchrun's / launch.py's argparse.
_ARG_INT = lazy_re.compile(
    r"error: argument (?P<arg>--(?:master|node)[_-](?:port|rank)(?:/--(?:master|node)[_-](?:port|rank))?): "
    r"invalid int value: '(?P<val>[^']{0,200})'"
)
# python-etcd's server errors (EtcdError table codes 300/301, the v2 API's "cause").
_ETCD = lazy_re.compile(r"etcd\.(?P<exc>Etcd\w*)(?::\s*(?P<msg>.*))?$")
_ETCD_SERVER = lazy_re.compile(
    r"Raft Internal Error|During Leader Election|LeaderElection|etcdserver: |Connection to etcd failed|"
    r"Could not get the list of servers"
)
# python-etcd's 100 "Key not found" on the keys torch's etcd rendezvous and EtcdStore keep (etcd_rendezvous.py
# "/torch/elastic/rendezvous", etcd_rendezvous_backend.py / etcd_store.py "/torch/elastic/store").
_ETCD_TORCH_KEY = lazy_re.compile(r"Key not found\s*:\s*/torch/elastic/")
# The file:// init file's folder of FAIR's submitit launch scripts (DeiT, MAE, ConvNeXt, DINO, ...
# run_with_submitit.py / submitit_pretrain.py get_shared_folder: /checkpoint/$USER/experiments or this).
_NO_SHARED = lazy_re.compile(r"\bNo shared folder available\b")
# Caffe2's store handlers under CreateCommonWorld (caffe2/distributed/redis_store_handler.cc,
# file_store_handler.cc, 2017-2023): "[enforce fail at redis_store_handler.cc:44] reply->type ==
# REDIS_REPLY_INTEGER. 6 vs 3" (6 = REDIS_REPLY_ERROR), "... reply->integer == 1. 0 vs 1 Value at X was
# already set (perhaps you reused a run ID you have used before?)", "... redis_->err == 0. 1 vs 0 Connection
# refused".
_CAFFE2_STORE = lazy_re.compile(
    r"\[enforce fail at (?:[^\]]*/)?(?P<h>redis|file)_store_handler\.cc:\d+\]\s*(?P<cond>.*)"
)
# busybox / bind nslookup in the training-operator's init container.
_NSLOOKUP = lazy_re.compile(
    r"nslookup: can't resolve '(?P<a>[^']{1,200})'|\*\* server can't find (?P<b>[\w.-]{1,200}): NXDOMAIN"
)
# torch/distributed/rendezvous.py's env:// message by its tail alone (rdzv_config.py reads it whole): a paste
# that broke the line after "rendezvous:" ("ValueError: Error initializing torch.distributed using env://
# rendezvous:" / "environment variable RANK expected, but not set"), a title or a cut paste that kept only the
# sentence. torch's own words, which no healthy line says.
_CONFIG_TAIL = lazy_re.compile(r"\benvironment variable (\w+) expected, but not set")
# Kubernetes' view of the same wait (pod names: <job>-worker-<i>, the operator's init container).
_K8S_INIT = lazy_re.compile(
    r"Back-off restarting failed container (?P<c>init-pytorch|wait-for-master) in pod (?P<pod>[\w.-]+)|"
    r"container \\?\"(?P<c2>[\w.-]+)\\?\" in pod \\?\"(?P<pod2>[\w.-]+-worker-\d+)\\?\" is waiting to start: "
    r"PodInitializing|"
    r"^\s*(?P<pod3>[\w.-]+-worker-\d+)\s+0/\d+\s+Init:(?P<st>CrashLoopBackOff|Error|0/\d+)\b"
)
# gloo's device: no interface holds the address the host name resolved to.
_GLOO_NO_IFACE = lazy_re.compile(
    r"gloo/transport/\w+/device\.cc:\d+\].*Unable to find interface for:?\s*(?P<addr>\S+)"
)

# The announcements before the process group's meeting, and what says it was over.
_INIT_START = lazy_re.compile(
    r"[Ii]nitializing (?:ddp|distributed): GLOBAL_RANK: (?P<rank>\d+), MEMBER: \d+/(?P<world>\d+)|"
    r"Added key: store_based_barrier_key:\d+ to store for rank: (?P<krank>\d+)|"
    r"Initializing TorchBackend in DeepSpeed with backend (?P<dsb>\w+)|"
    r"Initializing torch distributed with backend: (?P<dsb_old>\w+)|"
    # pytorch/examples' DDP example (distributed/ddp/example.py spmd_main, copied into many scripts): "[26236]
    # Initializing process group with: {'MASTER_ADDR': '10.0.0.1', 'MASTER_PORT': '29500', 'RANK': '0',
    # 'WORLD_SIZE': '2'}" before init_process_group, "[26236] world_size = 2, rank = 0, backend=nccl" (newer
    # "[26236] rank = 0, world_size = 2") once it returned
    r"(?:\[\d+\] )?Initializing process group with: \{(?P<env>[^}]*'WORLD_SIZE'[^}]*)\}"
)
_INIT_DONE = lazy_re.compile(
    r"\bworld_size = \d+, rank = \d+|\brank = \d+, world_size = \d+|"
    r"All distributed processes registered|distributed_backend=|Completed store-based barrier|"
    r"[Ii]nitializing (?:ddp|distributed): GLOBAL_RANK|Added key: store_based_barrier_key"
)
# What a run prints once it is past the meeting (Lightning's model summary and loops, a step), and the
# announcements of the frameworks that print once init_process_group returned: timm's train.py "Training in
# distributed mode with multiple processes, 1 GPU per process. Process 0, total 2.", Accelerate's state
# ("Distributed environment: MULTI_GPU  Backend: nccl"), HF Trainer's "Process rank: 0, device: cuda:0",
# mmengine's env summary ("Distributed training: True"), DeepSpeed's engine banner ("DeepSpeed info: ...").
_PAST_INIT = lazy_re.compile(
    r"\|\s*Name\s*\||Sanity Checking|Epoch \d|Training:|Validation|Trainable params|LOCAL_RANK: \d+ - |"
    r"Traceback|Error|error|Killed|NCCL|Timeout|timed out|"
    r"[Tt]raining in distributed mode|Distributed environment: |[Dd]istributed training: True|"
    r"Process rank: \d+, device: |DeepSpeed info: "
)


def _init_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("world") is not None and int(m.group("world")) < 2:
        return []
    # a person's Ctrl-C and its echo after the announcement is where the log stops (interrupted_waits.py)
    after, by_hand = before_hand_stop(hit.after(LINES_AFTER, same_rank=False))
    if (hit.lines[-1].no - hit.line.no >= LINES_AFTER and not by_hand) or len(after) > 6:
        return []  # the log goes on: not where it stopped
    if m.group("env") is not None:
        return _example_hang(row, hit, m, after)
    if any(_INIT_DONE.search(ln.text) or _PAST_INIT.search(ln.text) or is_progress(ln.text) for ln in after):
        return []
    if m.group("rank") is None and m.group("krank") is None:
        # DeepSpeed's line alone is a healthy INFO record; the hang is its line followed only by other ranks'
        # records of the same init_distributed ("cdb=None") and then nothing
        said = [ln.text for ln in after if ln.text.strip()]
        if not (said or by_hand) or not all("init_distributed" in t for t in said):
            return []
    if any(
        "All distributed processes registered" in ln.text for ln in hit.before(LINES_AFTER, same_rank=False)
    ):
        return []
    rank = m.group("rank") or m.group("krank")
    facts: dict[str, object] = {"problem": "hang at process group start", "stopped_by_hand": by_hand}
    if rank is not None:
        facts["rank"] = int(rank)
    else:  # DeepSpeed's comm.init_distributed names the backend, not the rank
        facts["backend"] = m.group("dsb") or m.group("dsb_old")
    who = f"rank {rank}" if rank is not None else "DeepSpeed's init_distributed"
    world = note = ""
    if m.group("world") is not None:
        size = int(m.group("world"))
        facts["world_size"] = size
        world = f" of {size}"
        seen = {int(rank)}
        for ln in hit.before(400, same_rank=False):
            a = _INIT_START.search(ln.text)
            if a and a.group("world") == m.group("world"):
                seen.add(int(a.group("rank")))
        missing = missing_ranks(seen, size)
        if not missing or 0 not in seen:
            # every rank announced (the meeting had everyone: a hang after it is not the rendezvous's), or
            # rank 0's line is not in the paste (only rank 0 logs "All distributed processes registered")
            return []
        if len(seen) > 1:
            facts["announced_ranks"] = sorted(seen)
            facts["missing_ranks"] = missing
            note = f"; rank(s) {rank_ranges(missing)} never announced themselves"
    return [
        row.event(
            hit,
            f"the log ends at the process group's start ({who}{world} announced itself and nothing "
            f"followed{note}): init_process_group is waiting for ranks that never joined (a node not "
            "started, MASTER_ADDR / MASTER_PORT or the world size different on some node, a firewall "
            "between nodes)",
            facts,
            tier=1,
            dedupe=(row.code, "init_hang"),
        )
    ]


_ENV_WORLD = lazy_re.compile(r"'WORLD_SIZE': '(\d+)'")
_ENV_ADDR = lazy_re.compile(r"'MASTER_ADDR': '([^']*)'")
# The commands that started the ranks, pasted between their output: a shell prompt's line.
_PROMPT = lazy_re.compile(r"^\s*(?:\$|\S+@\S+?[:$#]|\(\S+\)\s*\S*\$)\s")


def _example_hang(row: Signature, hit: Hit, m: re.Match[str], after: list[Line]) -> list[Event]:
    """The DDP example's announcement, then only other ranks' announcements (and the shell commands that
    started them): no rank got past init_process_group. Alone it is a healthy record."""
    world = _ENV_WORLD.search(m.group("env"))
    if not world or int(world.group(1)) < 2:
        return []
    if _INIT_DONE.search(hit.text, m.end()):
        return []  # its record past init_process_group, joined to it as a wrapped line
    said = [ln.text for ln in after if ln.text.strip()]
    if any(not (_INIT_START.search(t) or _PROMPT.match(t)) or _INIT_DONE.search(t) for t in said):
        return []
    before = [ln.text for ln in hit.before(40, same_rank=False)]
    if any(_INIT_DONE.search(t) or is_progress(t) for t in before):
        return []
    others = [t for t in [*before, *said] if (a := _INIT_START.search(t)) and a.group("env") is not None]
    if not others:
        return []
    addr = _ENV_ADDR.search(m.group("env"))
    facts: dict[str, object] = {"problem": "hang at process group start", "world_size": int(world.group(1))}
    if addr:
        facts["master_addr"] = addr.group(1)
    return [
        row.event(
            hit,
            f"the log ends at the process group's start ({len(others) + 1} ranks of {world.group(1)} "
            "announced themselves and none got past init_process_group): the ranks cannot meet at "
            "MASTER_ADDR:MASTER_PORT (a node that cannot reach it, a firewall between the nodes, a rank not "
            "started, or the world size different on some node)",
            facts,
            tier=1,
            dedupe=(row.code, "init_hang"),
        )
    ]


_REBUILD = lazy_re.compile(r"reducer\._rebuild_buckets\(\)")
# The rest of a stack after a frame's source line: frames, source lines, carets, rich's box and rule lines.
_STACK_REST = lazy_re.compile(
    r'^\s*$|^\s|File "|[\u2502\u256d\u256e\u256f\u2570\u2500\u2771\u276f]|^\^+$|^```$|^\S+:\d+ in \w+'
)
_EXC_LINE = lazy_re.compile(r"^\s*[\w.]*(?:Error|Exception|Interrupt)\b(?::|$)")


def _rebuild_cut(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    after = hit.after(LINES_AFTER, same_rank=False)
    if hit.lines[-1].no - hit.line.no >= LINES_AFTER:
        return None
    if any(_EXC_LINE.search(ln.text) or not _STACK_REST.search(ln.text) for ln in after):
        return None  # the exception line is there (its own row reads it), or other output follows
    return [
        row.event(
            hit,
            f"{hit.who()}: the stack ends in DDP's bucket rebuild (reducer._rebuild_buckets() in "
            "_pre_forward), its exception line cut off: the check that raises there is DDP's 'Expected to "
            "have finished reduction in the prior iteration' - parameters that did not receive a gradient on "
            "this rank (unused parameters, or ranks that took different branches)",
            {"frame": "reducer._rebuild_buckets", "cut": True},
            tier=1,
            dedupe=(row.code, "rebuild_cut"),
        )
    ]


def _context(hit: Hit, before: int = 8, after: int = 3) -> bool:
    lines = [*hit.before(before, same_rank=False), hit.line, *hit.after(after, same_rank=False)]
    return any(_RDZV_CONTEXT.search(ln.text) for ln in lines)


def _port_parse(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _context(hit):
        return None
    value = m.group("lit") if m.group("lit") is not None else m.group("cast")
    facts: dict[str, object] = {"problem": clip(m.group(0), 160)}
    if value is not None:
        facts["port_value"] = value
    what = (
        f"'{clip(value, 60)}' is not a port number"
        if value is not None
        else "the port is out of range 0-65535"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: the rendezvous could not start: {what} (MASTER_PORT, --master-port, the "
            "init_method URL or --rdzv-endpoint holds a URL, a host name, an unexpanded variable or a number "
            "past 65535)",
            facts,
            dedupe=(row.code, "port_parse"),
        )
    ]


def _tcpstore_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(8, same_rank=False), *hit.after(4, same_rank=False)]
    if not any("TCPStore" in ln.text for ln in near):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: TCPStore refused its arguments (a port passed as a string, or a host that is "
            "None: MASTER_ADDR / MASTER_PORT read from the environment without int() or unset)",
            {"problem": "TCPStore constructor arguments"},
            dedupe=(row.code, "tcpstore_args"),
        )
    ]


def _arg_int(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"the launcher refused {m.group('arg').split('/')[0]} '{clip(m.group('val'), 60)}': not an "
            "integer (a shell variable left unset or unexpanded, or a host:port where a port belongs)",
            {"problem": clip(m.group(0), 160), "argument": m.group("arg").split("/")[0]},
            dedupe=(row.code, "arg_int"),
        )
    ]


def _etcd(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    msg = m.group("msg") or ""
    if m.group("exc") == "EtcdKeyNotFound" and _ETCD_TORCH_KEY.search(msg):
        return [
            row.event(
                hit,
                f"{hit.who()}: the etcd server does not hold the rendezvous's own keys ({clip(msg, 120)}): "
                "torch's etcd / etcd-v2 backends speak etcd's v2 API, which etcd 3.4+ serves only when "
                "started with --enable-v2 (otherwise every v2 key reads as missing); or the directory was "
                "removed under the job (a TTL, another job's clean-up)",
                {"store_error": clip(m.group(0), 200), "backend": "etcd", "problem": "etcd_key_missing"},
                tier=1,
                dedupe=(row.code, "etcd"),
            )
        ]
    if not _ETCD_SERVER.search(msg) and m.group("exc") not in (
        "EtcdLeaderElectionInProgress",
        "EtcdConnectionFailed",
        "EtcdWatchTimedOut",
    ):
        return None
    return [
        row.event(
            hit,
            f"{hit.who()}: the etcd server of the rendezvous (--rdzv-backend=etcd) failed: "
            f"{clip(m.group(0), 160)} (etcd unreachable, without a leader, or overloaded)",
            {"store_error": clip(m.group(0), 200), "backend": "etcd"},
            dedupe=(row.code, "etcd"),
        )
    ]


def _no_shared(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"{hit.who()}: the submitit launch script found no shared folder for its file:// init file "
            "(get_shared_folder: /checkpoint/$USER/experiments exists only on the cluster it was written "
            "for): pass --job_dir / --shared_folder on a file system every node mounts, or launch with "
            "torchrun and env://",
            {"problem": "no_shared_folder", "init_method": "file://"},
            dedupe=(row.code, "no_shared_folder"),
        )
    ]


def _caffe2_store(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    cond, handler = m.group("cond"), m.group("h")
    if "Wait timeout" in cond:
        return None  # store_errors reads the stores' wait timeouts
    facts = {"store": f"caffe2 {handler} store handler", "store_error": clip(cond, 200)}
    if "already set" in cond:
        return [
            row.event(
                hit,
                f"{hit.who()}: Caffe2's {handler} store already held this rank's key (a run ID used before, "
                "or two ranks started with the same shard id): give each run a new --run_id and each rank "
                "its own --shard_id",
                {**facts, "problem": "key_already_set"},
                code=C.RENDEZVOUS_CONFIG.code,
                dedupe=(row.code, "caffe2_store"),
            )
        ]
    why = (
        "the redis server answered with an error reply (6 = REDIS_REPLY_ERROR: protected mode refusing a "
        "remote client, a password it was not given, MISCONF when it cannot save)"
        if "REDIS_REPLY_INTEGER. 6 vs" in cond or "REDIS_REPLY_STRING. 6 vs" in cond
        else "the store could not be reached or used"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: the rendezvous store of Caffe2's CreateCommonWorld failed "
            f"({clip(cond, 100)}): {why}",
            facts,
            dedupe=(row.code, "caffe2_store"),
        )
    ]


# What the init container's loop prints between its tries (busybox and bind nslookup, the loop's echo).
_WAIT_LOOP = lazy_re.compile(
    r"^\s*$|nslookup: can't resolve|server can't find|^Server:|^Address(?: \d+)?:\s*\S+(?:#|:)53\b|"
    r"^;; connection timed out|^waiting for master\b",
    re.I,
)


def _nslookup(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """Only a paste that ends while the worker is still waiting: launch_start's row reads the same lines
    when a failure follows them, and a name that resolved later is the loop's normal wait."""
    name = m.group("a") or m.group("b") or ""
    if name in ("(null)", ""):
        return None
    after = hit.after(LINES_AFTER, same_rank=False)
    if hit.lines[-1].no - hit.line.no >= LINES_AFTER:
        return None  # the log goes on past the window
    if not (
        any(ln.text.strip().lower().startswith("waiting for master") for ln in after)
        or re.search(r"-master-\d+(?:\.|$)", name)
    ):
        return None  # the loop's echo (a repeated one is folded away) or the operator's master name
    if not all(_WAIT_LOOP.search(ln.text) for ln in after):
        return None  # the name resolved, or something else happened: not a paste that ends in the wait
    return [
        row.event(
            hit,
            f"the worker's init container is still waiting for the master's name '{clip(name, 80)}' to "
            "resolve (Kubeflow PyTorchJob: the master pod is not running or not ready, its service is in "
            "another namespace, or the cluster DNS does not serve it): no rank started",
            {"master_addr": name, "launcher": "kubeflow training-operator"},
            dedupe=(row.code, "nslookup"),
        )
    ]


def _config_tail(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    var = m.group(1)
    return [
        row.event(
            hit,
            f"init_process_group could not start the env:// rendezvous: {var} is not set (start the "
            "script with torchrun / torch.distributed.launch / srun exporting it, or set RANK, WORLD_SIZE, "
            "MASTER_ADDR and MASTER_PORT yourself)",
            {"init_method": "env://", "missing_variable": var, "problem": clip(m.group(0), 160)},
            dedupe=(row.code,),
        )
    ]


def _k8s_init(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    pod = m.group("pod") or m.group("pod2") or m.group("pod3")
    pod = pod.split("_")[0]  # the event's "<pod>_<namespace>(<uid>)"
    state = m.group("st")
    failed = m.group("c") is not None or state in ("CrashLoopBackOff", "Error")
    what = (
        "keeps failing (its nslookup loop gave up)"
        if failed
        else "is still running (PodInitializing: its loop waits)"
    )
    return [
        row.event(
            hit,
            f"pod {pod}'s init container, which waits until the master's service name resolves, {what}: the "
            "master pod is not running or not ready (image, resources, its own crash), its Service is "
            "missing, or the cluster DNS / a network policy hides it; no rank of this worker started",
            {
                "pod": pod,
                "launcher": "kubeflow training-operator",
                "init_state": state or ("failed" if failed else "PodInitializing"),
            },
            tier=0 if failed else 1,
            dedupe=(row.code, "k8s_init"),
        )
    ]


def _gloo_no_iface(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    addr = m.group("addr").rstrip(".,")
    facts: dict[str, object] = {"address": addr, "transport": "gloo"}
    loop = addr.strip("[]").startswith("127.")
    why = (
        "the host name resolves to a loopback address (/etc/hosts 127.0.1.1)"
        if loop
        else "the host name resolves to an address no local interface holds"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: gloo found no network interface for {addr}: {why}; set GLOO_SOCKET_IFNAME to the "
            "interface the ranks reach each other on",
            facts,
            dedupe=(row.code, "gloo_no_iface"),
        )
    ]


SIGNATURES = (
    Signature(
        "env:// variable not set, the message's tail",
        _CONFIG_TAIL,
        _config_tail,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"expected, but not set",),
        words=("expected, but not set",),
    ),
    Signature(
        "rendezvous port that does not parse",
        _PORT_PARSE,
        _port_parse,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=(
            "invalid literal for int",
            "port could not be cast",
            "port out of range",
            "port must be 0-65535",
        ),
        anchor_from="the exception type ('ValueError: ', 'OverflowError: ') before Python's message",
        examples=(
            "ValueError: invalid literal for int() with base 10: 'tcp://10.0.0.1:29500'",
            "ValueError: Port could not be cast to integer value as '29500abc'",
            "OverflowError: getsockaddrarg: port must be 0-65535.",
        ),
    ),
    Signature(
        "TCPStore constructor arguments",
        _TCPSTORE_ARGS,
        _tcpstore_args,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("incompatible constructor arguments",),
        anchor_from="the exception type ('TypeError: ')",
        examples=(
            "TypeError: __init__(): incompatible constructor arguments. The following argument types are",
        ),
    ),
    Signature(
        "launcher port argument",
        _ARG_INT,
        _arg_int,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"invalid int value",),
        worth=(rb"invalid int value",),
        words=("invalid int value",),
        anchor_from="argparse's 'error: argument ...: invalid int value' (the anchor is the pattern's tail)",
        examples=(
            "torchrun: error: argument --master_port/--master-port: invalid int value: '$MASTER_PORT'",
        ),
    ),
    Signature(
        "etcd rendezvous server error",
        _ETCD,
        _etcd,
        C.STORE_UNREACHABLE.code,
        anchors=(b"etcd.Etcd",),
        words=("etcd.etcd",),
    ),
    Signature(
        "submitit shared folder missing",
        _NO_SHARED,
        _no_shared,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"No shared folder available",),
    ),
    Signature(
        "caffe2 store handler enforce",
        _CAFFE2_STORE,
        _caffe2_store,
        C.STORE_UNREACHABLE.code,
        anchors=(b"_store_handler.cc:",),
        words=("_store_handler.cc:",),
    ),
    Signature(
        "kubeflow init container nslookup",
        _NSLOOKUP,
        _nslookup,
        C.STORE_UNREACHABLE.code,
        anchors=(b"nslookup: can't resolve", b"server can't find"),
        worth=(rb"nslookup: can't resolve", rb"server can't find"),
        words=("nslookup: can't resolve", "server can't find"),
    ),
    Signature(
        "kubeflow worker pod stuck in its init container",
        _K8S_INIT,
        _k8s_init,
        C.STORE_UNREACHABLE.code,
        anchors=(
            b"failed container init-pytorch",
            b"failed container wait-for-master",
            b"PodInitializing",
            b"Init:",
        ),
        worth=(
            rb"failed container (?:init-pytorch|wait-for-master)",
            rb"is waiting to start: PodInitializing",
            rb"-worker-\d+\s+0/\d+\s+Init:",
        ),
        words=("init-pytorch", "wait-for-master", "podinitializing", "init:"),
    ),
    Signature(
        "log that ends at the process group's start",
        _INIT_START,
        _init_hang,
        C.RENDEZVOUS_TIMEOUT.code,
        anchors=(
            b"GLOBAL_RANK: ",
            b"Added key: store_based_barrier_key",
            b"Initializing TorchBackend in DeepSpeed",
            b"Initializing torch distributed with backend",
            b"Initializing process group with: {",
        ),
        worth=(
            rb"GLOBAL_RANK: \d+, MEMBER: ",
            rb"Added key: store_based_barrier_key",
            rb"Initializing TorchBackend in DeepSpeed",
            rb"Initializing torch distributed with backend",
            rb"Initializing process group with: \{",
        ),
        words=(
            "global_rank: ",
            "added key: store_based_barrier_key",
            "initializing torchbackend in deepspeed",
            "initializing torch distributed with backend",
            "initializing process group with: {",
        ),
    ),
    Signature(
        "stack cut in DDP's bucket rebuild",
        _REBUILD,
        _rebuild_cut,
        C.DDP_UNFINISHED_REDUCTION.code,
        anchors=(b"reducer._rebuild_buckets()",),
        words=("_rebuild_buckets",),
    ),
    Signature(
        "gloo device without interface",
        _GLOO_NO_IFACE,
        _gloo_no_iface,
        C.NCCL_SOCKET_ERROR.code,
        anchors=(b"Unable to find interface for",),
        worth=(rb"Unable to find interface for",),
        words=("unable to find interface for",),
        anchor_from="gloo's '[.../device.cc:NNN]' source tag before the enforce text",
        examples=(
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:208] ifa != "
            "nullptr. Unable to find interface for: [127.0.1.1]",
        ),
    ),
)

parse = gated_reader(SIGNATURES)

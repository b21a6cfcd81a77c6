"""rendezvous, its settings: init_process_group (or the script around it) could not even start the meeting
because what it needs is missing (RUN224). The ranks' meeting itself (timeouts, the store's sockets) is
rendezvous.py's; this module is listed right after it.

Formats: torch/distributed/rendezvous.py "Error initializing torch.distributed using env:// rendezvous:
environment variable RANK expected, but not set" (and tcp:// "port number missing"); a script's own
os.environ['RANK'] raising "KeyError: 'RANK'" when started without a launcher; detectron2's launcher logging
"Process group URL: None" at ERROR; TCPStore's "use_libuv was requested but PyTorch was build without libuv
support" (2.4+ Windows wheels: the build, RUN551 driver_env); distributed_c10d's "Default process group has
not been initialized" (a collective before init_process_group). torchrun's rendezvous settings that do not
parse (elastic/rendezvous/utils.py, static_tcp_rendezvous.py, api.py, 1.9-2.x; elastic/utils/distributed.py):
"Port is absent in endpoint: node-1. Try launching with --master-port", "endpoint is absent in
RendezvousParameters", "rank is absent in RendezvousParameters", "The hostname of the rendezvous endpoint
':29500' must be a dot-separated list of labels, ...", "The port number of the rendezvous endpoint '...'
must be an integer between 0 and 65536.", "The rendezvous configuration option 'timeout' does not represent
a valid integer value." / "must have a value specified", "The minimum number of rendezvous nodes (0) must be
greater than zero.", "server_port must be specified when world_size > 1", and rendezvous.py's "port must
have value from 0 to 65535 but was N" (an empty or wrong --master-addr / --master-port / --rdzv-endpoint,
often a launcher's variable left unset).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.rendezvous import LEAD
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.knowledge.progress import is_progress
from pgdoctor.knowledge.ranks import missing_ranks, rank_ranges
from pgdoctor.model import lazy_re

# distributed_c10d._get_default_group (1.x-2.x): "Default process group has not been initialized, please
# make sure to call init_process_group." (1.x: "Default process group is not initialized").
_NOT_INIT = lazy_re.compile(r"Default process group (?:has not been|is not) initialized")
# torch/distributed/rendezvous.py: "Error initializing torch.distributed using env:// rendezvous:
# environment variable WORLD_SIZE expected, but not set", "... tcp:// rendezvous: port number missing"; the
# 1.0 nightlies raised it without the lead: "RuntimeError: env:// rendezvous: WORLD_SIZE not set".
_CONFIG = lazy_re.compile(
    r"(?:Error initializing torch\.distributed using |Error: )(\w+://) rendezvous: (.+?)(?:\.|$)"
)
_CONFIG_VAR = lazy_re.compile(r"environment variable (\w+) expected, but not set|^(\w+) not set$")
# A script that reads the launcher's variables itself (os.environ['RANK'], os.environ["LOCAL_RANK"]) and was
# started without torchrun / torch.distributed.launch / srun setting them: os.py's __getitem__ raises
# "KeyError: 'RANK'" ("raise KeyError(key) from None" above it). The same for the other launchers'
# variables that trainers read to find their rank: Slurm's srun (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS,
# SLURM_NODEID), Open MPI's mpirun (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK), MPICH (PMI_RANK, PMI_SIZE).
_ENV_KEY = lazy_re.compile(
    LEAD + r"KeyError: ['\"](RANK|LOCAL_RANK|WORLD_SIZE|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|GROUP_RANK|"
    r"NODE_RANK|SLURM_PROCID|SLURM_LOCALID|SLURM_NTASKS|SLURM_NODEID|SLURM_NPROCS|OMPI_COMM_WORLD_(?:LOCAL_)?RANK|"
    r"OMPI_COMM_WORLD_(?:LOCAL_)?SIZE|PMI_RANK|PMI_SIZE|MV2_COMM_WORLD_(?:LOCAL_)?(?:RANK|SIZE)|MASTER_HOST|"
    r"PADDLE_TRAINER_ID|PADDLE_TRAINERS_NUM|PADDLE_TRAINER_ENDPOINTS|PADDLE_CURRENT_ENDPOINT|"
    r"AZ_BATCHAI_MPI_MASTER_NODE|AZ_BATCH_MASTER_NODE)['\"]\s*$|"
    # torch 2.6+ distributed_c10d.get_node_local_rank() without fallback_rank: "RuntimeError: LOCAL_RANK is
    # not in the environment. Consider passing fallback_rank to allow `get_node_local_rank` to work, ..."
    r"\b(LOCAL_RANK) is not in the environment\. Consider passing fallback_rank"
)
# torchpack's dist.init() (torchpack/distributed/context.py 0.2-0.3, BEVFusion and its forks) reads
# MASTER_HOST, which `torchpack dist-run` exports; Paddle's trainers read the PADDLE_* that
# paddle.distributed.launch sets; MVAPICH2's mpirun the MV2_COMM_WORLD_*; Azure's MPI jobs the master's
# address (AzureML-BERT: os.environ['MASTER_ADDR'] = os.environ['AZ_BATCHAI_MPI_MASTER_NODE']).
_LAUNCHER_OF = (
    ("SLURM_", "srun"),
    ("OMPI_", "mpirun (Open MPI)"),
    ("PMI_", "mpirun / mpiexec (MPICH)"),
    ("MV2_", "mpirun (MVAPICH2)"),
    ("MASTER_HOST", "torchpack dist-run"),
    ("PADDLE_", "python -m paddle.distributed.launch"),
    ("AZ_BATCH", "an Azure ML / Batch AI MPI job"),
)
# detectron2's launcher (engine/launch.py, and the many trainers that copied it) logs "Process group URL:
# <dist_url>" at ERROR exactly when init_process_group raised; "None" is an init_method never set.
_D2_URL = lazy_re.compile(r"Process group URL: (?:None|)\s*$")


def _config(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    v = _CONFIG_VAR.search(m.group(2))
    facts = {"init_method": m.group(1), "problem": m.group(2).strip()[:160]}
    var = (v.group(1) or v.group(2)) if v else None
    if var:
        facts["missing_variable"] = var
    what = f"{var} is not set" if var else m.group(2).strip()[:120]
    return [
        row.event(
            hit,
            f"init_process_group could not start the {m.group(1)} rendezvous: {what}",
            facts,
            dedupe=(row.code,),
        )
    ]


def _env_key(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    var = m.group(1) or m.group(2)
    launcher = next((name for pre, name in _LAUNCHER_OF if var.startswith(pre)), None)
    which = (
        f"started outside {launcher}, which sets it"
        if launcher
        else "started without a launcher that sets them (torchrun, torch.distributed.launch, srun with the "
        "job's own export)"
    )
    # A scheduler's own variable (Slurm's, an MPI launcher's), not torch's: the code is tied to a job
    # environment this run is not in (RUN550, driver_env), not missing its rendezvous settings.
    code = C.SCHEDULER_ENV_MISSING.code if var.startswith(("SLURM_", "OMPI_", "PMI_", "MV2_")) else row.code
    return [
        row.event(
            hit,
            f"{var} is not in the environment: the script reads the launcher's variables and was {which}",
            {
                "init_method": "env://",
                "missing_variable": var,
                "problem": f"environment variable {var} not set",
            },
            code=code,
            dedupe=(code,),
        )
    ]


# The same launchers pick a free local port when dist_url is "auto" ("tcp://127.0.0.1:<port>"), which the
# other machines cannot reach, so they assert one machine: detectron2 "dist_url=auto not supported in
# multi-machine jobs.", nerfstudio "dist_url=auto is not supported for multi-machine jobs.", YOLOX
# "dist_url=auto cannot work with distributed training.". A multi-node run needs an explicit tcp://host:port.
_D2_AUTO = lazy_re.compile(r"dist_url=['\"]?auto['\"]? (?:is )?(?:not supported|cannot work)")


def _d2_auto(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the launcher refused dist_url=auto for several machines: 'auto' is a free port on 127.0.0.1 of "
            "one machine; give every machine the same --dist-url tcp://<machine 0's address>:<port>",
            {"init_method": "auto", "problem": "dist_url=auto with num_machines > 1"},
            dedupe=(row.code, "d2_auto"),
        )
    ]


def _d2_url(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "ERROR" not in hit.text and "rror" not in hit.text:
        return None
    return [
        row.event(
            hit,
            "init_process_group failed with no init_method: the launcher's dist_url is None (not "
            "set in the config or the command line)",
            {
                "init_method": None,
                "problem": "dist_url is None",
                "launcher": "detectron2" if "d2." in hit.text else "a copy of detectron2's launch.py",
            },
            dedupe=(row.code, "d2_url"),
        )
    ]


# TCPStore (torch 2.4+, TCPStore.cpp): torchrun and init_process_group ask for the libuv store backend by
# default, which the Windows wheels (and some source builds) lack: "RuntimeError: use_libuv was requested
# but PyTorch was build without libuv support" (DistStoreError in later versions), raised from
# static_tcp_rendezvous.py / rendezvous.py's TCPStore(...). USE_LIBUV=0 (or use_libuv=False, or
# "?use_libuv=0" in a tcp:// init_method) selects the classic backend.
_NO_LIBUV = lazy_re.compile(r"use_libuv was requested but PyTorch was buil[dt] without libuv support")


def _no_libuv(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "the rendezvous store asked for its libuv backend, which this PyTorch build lacks (the Windows "
            "wheels of 2.4+): set USE_LIBUV=0 in the environment (or use_libuv=False / ?use_libuv=0 in the "
            "init_method)",
            {"problem": "store backend libuv not built", "store_backend": "libuv", "fix_env": "USE_LIBUV=0"},
            dedupe=(row.code, "libuv"),
        )
    ]


def _not_initialized(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "a collective ran before init_process_group: the default process group was never created "
            "(started without a launcher, or a code path that skips the initialisation)",
            {"problem": "default process group not initialized"},
            dedupe=(row.code, "not_initialized"),
        )
    ]


# torch/distributed/rendezvous.py (1.x-2.x): "RuntimeError: No rendezvous handler for ://" - the init_method
# has no scheme torch knows (empty: a dist_url left unset; misspelt: "env//", "tcp:/host:port", "nccl://").
_NO_HANDLER = lazy_re.compile(r"No rendezvous handler for ([\w/.+-]*)://")


def _no_handler(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    scheme = m.group(1)
    if scheme in ("env", "tcp"):
        # torch 1.7's Windows build registered only file:// (rendezvous.py: tcp and env under "if not
        # sys.platform == 'win32'", TCPStore came to Windows in 1.8): the platform's build, not the URL.
        return [
            row.event(
                hit,
                f"this PyTorch has no {scheme}:// rendezvous: a Windows build without TCPStore (1.7); use "
                "init_method='file:///path' there, a newer torch, or run under Linux / WSL2",
                {
                    "init_method": f"{scheme}://",
                    "problem": "no rendezvous handler",
                    "reason": "windows_build",
                },
                code=C.POSIX_ONLY_ON_WINDOWS.code,
                dedupe=(C.POSIX_ONLY_ON_WINDOWS.code, "no_handler"),
            )
        ]
    what = f"its scheme {scheme}:// is not one torch knows" if scheme else "it is empty (no scheme at all)"
    return [
        row.event(
            hit,
            f"init_process_group could not pick a rendezvous for its init_method: {what}; use env:// (with "
            "the launcher's variables), tcp://host:port or file:///path",
            {"init_method": f"{scheme}://", "problem": "no rendezvous handler"},
            dedupe=(row.code, "no_handler"),
        )
    ]


# torch/distributed/elastic/rendezvous/api.py (1.9-2.x, RendezvousHandlerRegistry.create_handler): torchrun's
# --rdzv-backend (--rdzv_backend) names a backend nobody registered (a typo, or etcd / etcd-v2 without the
# etcd client installed): "ValueError: The rendezvous backend 'c10' is not registered. Did you forget to call
# `register`?".
_NO_BACKEND = lazy_re.compile(r"The rendezvous backend '([^']*)' is not registered")


def _no_backend(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    name = m.group(1)
    return [
        row.event(
            hit,
            f"torchrun could not create its rendezvous: the backend '{name}' is not registered (use c10d or "
            "static; etcd needs the python-etcd client installed)",
            {"problem": "rendezvous backend not registered", "rdzv_backend": name},
            dedupe=(row.code, "no_backend"),
        )
    ]


# The parameters torchrun builds its rendezvous from, rejected before any connection (see the module's
# docstring): what was wrong is named in the message.
_BAD_PARAM = lazy_re.compile(
    r"(?P<what>Port is absent in endpoint: ?(?P<ep>\S*)|endpoint is absent in RendezvousParameters|"
    r"rank is absent in RendezvousParameters|"
    r"The (?:hostname|port number) of the rendezvous endpoint '(?P<ep2>[^']*)' must be|"
    r"The rendezvous configuration (?:option '[^']*' (?:does not represent a valid|must have a value)|"
    r"string must be in format)|"
    r"The (?:minimum|maximum) number of rendezvous nodes \(-?\d+\) must be|"
    r"The rendezvous backend name must be a non-empty string|"
    r"server_port must be specified when world_size > 1|"
    r"port must have value from 0 to 65535 but was -?\d+)"
)


def _bad_param(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what").rstrip(".")
    facts: dict[str, Any] = {"problem": what}
    ep = m.group("ep") or m.group("ep2")
    if ep is not None:
        facts["rdzv_endpoint"] = ep.rstrip(".")
    return [
        row.event(
            hit,
            f"torchrun's rendezvous settings were rejected before any connection ({clip(what, 120)}): "
            "--master-addr / --master-port / --rdzv-endpoint / --rdzv-conf are empty or malformed (often a "
            "launcher's variable left unset)",
            facts,
            dedupe=(row.code, "bad_param"),
        )
    ]


# A launcher wrapper that cannot find the job's place in the world in its environment: DeepSpeed's runner
# (deepspeed/launcher/runner.py 0.5-0.16) "Unable to detect suitable master address via `hostname -I`, please
# manually specify one via --master_addr" (logged, then raised); DeepSpeed's MPI launcher helper
# (deepspeed/launcher/launcher_helper.py 0.14-0.16) "rank number is not in current env!", "rank number doesn't
# match!", "local_rank number doesn't match!"; Lightning's LSF environment (lightning/fabric/plugins/
# environments/lsf.py 1.6-2.4) "Did not find the environment variable `LSB_DJOB_RANKFILE`", "The environment
# variable `LSB_DJOB_RANKFILE` is empty", "Could not find job id in environment variable LSB_JOBID".
_WRAPPER_ENV = lazy_re.compile(
    r"(?P<what>Unable to detect suitable master address via `hostname -I`|"
    r"(?:local_)?rank number (?:is not in current env|doesn't match)!|"
    r"Did not find the environment variable `LSB_\w+`|The environment variable `LSB_\w+` is empty|"
    r"Could not find job id in environment variable LSB_JOBID)"
)


def _wrapper_env(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text:
        return []  # the traceback's source line; the exception's own line follows
    what = m.group("what")
    if what.startswith("Unable to detect"):
        how = "pass --master_addr (rank 0's address) to the deepspeed launcher"
    elif "LSB_" in what:
        how = "run it inside an LSF job (bsub / jsrun), or give Lightning another cluster environment"
    else:
        how = "start it through the MPI launcher the helper was told (--launcher), which sets the ranks"
    return [
        row.event(
            hit,
            f"{hit.who()}: the launcher could not read the job's place in the world ({what}): {how}",
            {"problem": what, "reason": "launcher_env_missing"},
            dedupe=(row.code, "wrapper_env"),
        )
    ]


# DeepSpeed's mpi_discovery (deepspeed/comm/comm.py, utils/distributed.py, 0.3-0.16) after torch.distributed
# was already initialised: "AssertionError: MPI world size 1 does not match torch world size 2" / "MPI rank 0
# does not match torch rank 3" - two launchers disagree on the world (mpirun's variables and torchrun's, or
# ranks started one by one with a stale WORLD_SIZE).
_MPI_MISMATCH = lazy_re.compile(
    r"MPI (?P<what>rank|world size) (?P<mpi>\d+) does not match torch (?:rank|world size) (?P<torch>\d+)"
)


def _mpi_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what, mpi, torch = m.group("what"), int(m.group("mpi")), int(m.group("torch"))
    key = "world_size" if what == "world size" else "rank"
    return [
        row.event(
            hit,
            f"the MPI launcher's {what} ({mpi}) is not torch.distributed's ({torch}): two launchers set the "
            "world (mpirun's variables and torchrun's or the script's RANK / WORLD_SIZE); start the job with "
            "one",
            {"problem": f"{key} mismatch between MPI and torch", f"mpi_{key}": mpi, f"torch_{key}": torch},
            dedupe=(row.code, "mpi_mismatch"),
        )
    ]


# Lightning's checks of the launcher against its own settings (lightning_fabric/plugins/environments/
# slurm.py and torchelastic.py, pytorch_lightning 1.6+ / lightning 2.x): "RuntimeError: You set
# `--ntasks=8` in your SLURM bash script, but this variable is not supported. HINT: Use
# `--ntasks-per-node=8` instead.", "ValueError: You set `devices=4` in Lightning, but the number of tasks
# per node configured in SLURM `--ntasks-per-node=1` does not match. HINT: Set `devices=1`.", the same for
# `num_nodes` and SLURM's `--nodes`, and torchelastic's "You set `devices=2` and `num_nodes=1` in
# Lightning, but the product (2 * 1) does not match the world size (4).": launcher and Trainer disagree.
_PL_WORLD = lazy_re.compile(
    r"You set `(?P<set>--ntasks=\d+)` in your SLURM bash script, but this variable is not supported|"
    r"You set `(?P<set2>(?:devices|num_nodes)=[^`]+)`(?: and `[^`]+`)? in Lightning, but "
    r"(?P<why>the number of (?:tasks per node|nodes) configured in SLURM `[^`]+` does not match|"
    r"the product \([^)]*\) does not match the world size \(\d+\))"
)


def _pl_world(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    said = m.group("set") or m.group("set2")
    why = (
        "Lightning does not support --ntasks under srun: use --ntasks-per-node (one task per device)"
        if m.group("set")
        else f"the launcher's world and the Trainer's disagree ({m.group('why')})"
    )
    return [
        row.event(
            hit,
            f"Lightning rejected the launch settings ({said}): {why}; set the Trainer's devices / num_nodes "
            "to what the launcher starts",
            {"problem": "launcher and Lightning disagree on the world", "setting": said},
            dedupe=(row.code, "pl_world"),
        )
    ]


# Lightning's announcement of each process's place in the world (pytorch_lightning 1.x "initializing ddp:
# GLOBAL_RANK: 1, MEMBER: 2/8", 1.6+ / lightning 2.x "Initializing distributed: GLOBAL_RANK: 1, MEMBER: 2/8").
# Two processes announcing one global rank while other ranks never announce theirs: the nodes computed the
# same ranks (NODE_RANK unset on every node, srun starting one task per node while Lightning spawns the
# devices itself, or the reverse), so the process group waits for ranks that never come. A process that
# logs through two handlers ("INFO: Initializing ..." and "I0411 ... distributed.py:244] Initializing ...")
# prints each of its lines twice in two shapes: a duplicate counts only within one shape.
_PL_MEMBER = lazy_re.compile(r"[Ii]nitializing (?:ddp|distributed): GLOBAL_RANK: (\d+), MEMBER: (\d+)/(\d+)")


def _pl_members(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    before = hit.before(400, same_rank=False)
    if any(_PL_MEMBER.search(ln.text) for ln in before):
        return []  # read once, at the first announcement
    after = hit.after(400, same_rank=False)
    world = int(m.group(3))
    seen: dict[tuple[int, bool, Optional[str], str], int] = {}
    for ln in [hit.line, *after]:
        a = _PL_MEMBER.search(ln.text)
        if a and int(a.group(3)) == world:
            key = (int(a.group(1)), ln.ts is not None, ln.proc, re.sub(r"\d", "0", ln.text[: a.start()]))
            seen[key] = seen.get(key, 0) + 1
    ranks = {k[0] for k in seen}
    twice = sorted({k[0] for k, n in seen.items() if n >= 2})
    missing = missing_ranks(ranks, world)
    if not twice or not missing or any(is_progress(ln.text) for ln in after):
        return []
    return [
        row.event(
            hit,
            f"Lightning: global rank(s) {rank_ranges(twice)} were taken by two processes each and "
            f"rank(s) {rank_ranges(missing)} of the world of {world} never started: the nodes computed the "
            "same ranks (NODE_RANK / the node's index unset or equal on every node, or srun's tasks per node "
            "not matching the Trainer's devices), so the process group waits for ranks that never come",
            {
                "framework": "lightning",
                "problem": "duplicate global ranks",
                "duplicate_ranks": twice,
                "missing_ranks": missing,
                "world_size": world,
            },
            dedupe=(row.code, "pl_members"),
        )
    ]


# torch 0.3-0.4's THD env:// init (torch/lib/THD/base/init_methods/InitMethodEnv.cpp): "failed to read the
# MASTER_ADDR environmental variable; maybe you forgot to set it?", "rank is not set but it is required for env://
# init method", "world_size specified both as an environmental variable and to the initializer".
_THD_ENV = lazy_re.compile(
    r"failed to read the (?P<var>\w+) environmental variable; maybe you forgot to set it|"
    r"(?P<param>rank|world_size) (?P<how>is not set but it is required for env:// init method|"
    r"specified both as an environmental variable and to the initializer)"
)


def _thd_env(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    var = m.group("var") or m.group("param").upper()
    both = bool(m.group("how")) and m.group("how").startswith("specified both")
    what = (
        f"{m.group('param')} is given both in the environment and to init_process_group, with different "
        "values"
        if both
        else f"{var} is not set"
    )
    return [
        row.event(
            hit,
            f"init_process_group could not start the env:// rendezvous (torch 0.4): {what}",
            {"init_method": "env://", "missing_variable": None if both else var, "problem": what},
            dedupe=(row.code,),
        )
    ]


# The parameter checks' own words (one list for the scanner's anchors and its line test).
_PARAM_WORDS = (
    b"is absent in endpoint",
    b"is absent in RendezvousParameters",
    b"of the rendezvous endpoint '",
    b"The rendezvous configuration ",
    b"number of rendezvous nodes",
    b"server_port must be specified",
    b"port must have value from",
)
# The launcher's and the rendezvous handler's own checks of their settings (torch/distributed/run.py,
# elastic/rendezvous/dynamic_rendezvous.py, c10d_rendezvous_backend.py, etcd_rendezvous*.py, api.py and
# rendezvous.py's init_method URL parsing; 1.10-2.13): torchrun refuses "--nnodes=1:2:3" ('nnodes=1:2:3 is
# not in "MIN:MAX" format'), "Unsupported nproc_per_node value: foo", a min/max that do not fit ("The maximum
# number of nodes (1) must be greater than or equal to the minimum number of nodes (2).", "The minimum
# number of nodes (0) must be greater than zero."), a timeout <= 0 ("The join timeout (-1) must be
# positive.", "The read timeout must be a positive integer."), an empty --rdzv_id ("The run id must be a
# non-empty string."), "Invalid store type given. Currently only supports file and tcp.", "The rendezvous
# backend 'etcd' does not match the requested backend 'c10d'.", "The (etcd )protocol must be HTTP or
# HTTPS."; init_method "tcp://host" without its port or rank ("port number missing", "rank parameter
# missing", "world size parameter missing").
_LAUNCH_ARGS = lazy_re.compile(
    r"(?P<what>nnodes=\S+ is not in \"MIN:MAX\" format|Unsupported nproc_per_node value: \S+|"
    r"The maximum number of nodes \(-?\d+\) must be greater than or equal to the minimum number of nodes|"
    r"The minimum number of nodes \(-?\d+\) must be greater than zero|"
    r"The \w+ timeout \(\S+\) must be positive|The read timeout must be a positive integer|"
    r"The run id must be a non-empty string|Invalid store type given\. Currently only supports file and tcp|"
    r"The rendezvous backend '[^']*' does not match the requested backend|"
    r"The (?:etcd )?protocol must be HTTP or HTTPS|"
    r"Error: (?:port number|rank parameter|world size parameter) missing\s*$)"
)
_LAUNCH_OWN = (
    b'is not in "MIN:MAX" format',
    b"Unsupported nproc_per_node value",
    b"or equal to the minimum number of nodes",
    b"number of nodes (0) must be greater than zero",
    b"Invalid store type given. Currently only supports",
    b"does not match the requested backend",
)


def _launch_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what").removeprefix("Error: ").strip()
    return [
        row.event(
            hit,
            f"the launcher or the rendezvous refused its settings before any rank started: {clip(what, 120)} "
            "(fix the torchrun / init_method arguments)",
            {"problem": clip(what, 160)},
            dedupe=(row.code, "launch_args"),
        )
    ]


SIGNATURES = (
    Signature(
        "THD env:// settings (0.3-0.4)",
        _THD_ENV,
        _thd_env,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(
            b"rror",
            b"environmental variable; maybe you forgot",
            b"required for env:// init method",
            b"specified both as an environmental variable",
        ),
        worth=(
            rb"environmental variable; maybe you forgot",
            rb"required for env:// init method",
            rb"specified both as an environmental variable",
        ),
        words=("environmental variable", "required for env://"),
    ),
    Signature(
        "mpi and torch disagree on the world",
        _MPI_MISMATCH,
        _mpi_mismatch,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror", b"does not match torch"),
        worth=(rb"does not match torch",),
        words=("does not match torch",),
    ),
    Signature(
        "lightning processes that took the same global rank",
        _PL_MEMBER,
        _pl_members,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"GLOBAL_RANK: ",),
        worth=(rb"GLOBAL_RANK: \d+, MEMBER: ",),
        words=("global_rank: ",),
    ),
    Signature(
        "lightning and the launcher disagree on the world",
        _PL_WORLD,
        _pl_world,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"in your SLURM bash script", b"in Lightning, but"),
        worth=(rb"in your SLURM bash script", rb"in Lightning, but"),
        words=("in your slurm bash script", "in lightning, but"),
    ),
    Signature(
        "launcher wrapper's world settings missing",
        _WRAPPER_ENV,
        _wrapper_env,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(
            b"Unable to detect suitable master address",
            b"number is not in current env",
            b"number doesn't match!",
            b"Did not find the environment variable `LSB_",
            b"The environment variable `LSB_",
            b"environment variable LSB_JOBID",
        ),
        words=("master address", "current env", "doesn't match!", "lsb_"),
    ),
    Signature(
        "rendezvous parameters rejected",
        _BAD_PARAM,
        _bad_param,
        C.RENDEZVOUS_CONFIG.code,
        # (the parameter checks by their own words too: a title quotes them without the 'ValueError: ')
        anchors=(b"rror", *_PARAM_WORDS),
        worth=(rb"Error\b", *(re.escape(a) for a in _PARAM_WORDS)),
        words=("rendezvous", "endpoint", "server_port", "port must have value"),
        anchor_from="the exception type ('ValueError: ') before torch's message",
        examples=(
            "ValueError: Port is absent in endpoint: node-1. Try launching with --master-port",
            "ValueError: port must have value from 0 to 65535 but was 70000.",
        ),
    ),
    Signature(
        "rendezvous backend not registered",
        _NO_BACKEND,
        _no_backend,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("rendezvous backend",),
        anchor_from="the exception type ('ValueError: ') before torch's message",
        examples=(
            "ValueError: The rendezvous backend 'c10' is not registered. Did you forget to call `register`?",
        ),
    ),
    Signature(
        "no rendezvous handler",
        _NO_HANDLER,
        _no_handler,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("no rendezvous handler",),
        anchor_from="the exception type ('RuntimeError: ', 'ValueError: ') before torch's message",
        examples=(
            "RuntimeError: No rendezvous handler for ://",
            "ValueError: No rendezvous handler for env//://",
        ),
    ),
    Signature(
        "env:// configuration",
        _CONFIG,
        _config,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("error initializing torch.distributed", ":// rendezvous: "),
    ),
    Signature(
        "detectron2 url none",
        _D2_URL,
        _d2_url,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"ERROR",),
        worth=(rb"\bERROR\b",),
        words=("process group url",),
        anchor_from="the logger's 'ERROR' level before the message (required by the row)",
        examples=("ERROR [01/24 21:11:46 d2.engine.launch]: Process group URL: None",),
    ),
    Signature(
        "detectron2 dist_url auto on several machines",
        _D2_AUTO,
        _d2_auto,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"dist_url=",),
        worth=(rb"dist_url=['\"]?auto",),
        words=("dist_url=",),
        examples=("AssertionError: dist_url=auto is not supported for multi-machine jobs.",),
    ),
    Signature(
        "launcher variable missing",
        _ENV_KEY,
        _env_key,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("keyerror", "fallback_rank"),
        anchor_from="the 'Error' of 'KeyError: ' (of 'RuntimeError: ' before get_node_local_rank's sentence)",
        examples=("KeyError: 'RANK'", 'KeyError: "LOCAL_RANK"'),
    ),
    Signature(
        "launcher settings refused",
        _LAUNCH_ARGS,
        _launch_args,
        C.RENDEZVOUS_CONFIG.code,
        # (the launcher's own sentences, quoted without their exception type too, are said by no healthy line)
        anchors=(b"rror", *_LAUNCH_OWN),
        worth=(rb"Error\b", *(re.escape(w) for w in _LAUNCH_OWN)),
        words=(
            "nnodes",
            "nproc_per_node",
            "nodes",
            "timeout",
            "run id",
            "store type",
            "backend",
            "protocol",
            "missing",
        ),
        anchor_from="the exception type ('ValueError: ', 'RuntimeError: ') before the launcher's message",
        examples=(
            'ValueError: nnodes=1:2:3 is not in "MIN:MAX" format',
            "ValueError: The maximum number of nodes (1) must be greater than or equal to the minimum number "
            "of nodes (2).",
        ),
    ),
    Signature(
        "store backend not built",
        _NO_LIBUV,
        _no_libuv,
        C.STORE_LIBUV_NOT_BUILT.code,
        anchors=(b"use_libuv was requested",),
        worth=(rb"use_libuv was requested",),
        words=("use_libuv",),
        examples=("RuntimeError: use_libuv was requested but PyTorch was build without libuv support",),
    ),
    Signature(
        "default group not initialized",
        _NOT_INIT,
        _not_initialized,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        words=("has not been initialized", "is not initialized"),
        anchor_from="the exception type ('RuntimeError: ', 'ValueError: ') before the message",
        examples=(
            "RuntimeError: Default process group has not been initialized, please make sure to call "
            "init_process_group.",
        ),
    ),
)
parse = gated_reader(SIGNATURES)

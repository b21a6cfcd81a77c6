"""deepspeed_texts: DeepSpeed's own words for a job that cannot start or will not run as asked, the ones the
families elsewhere did not read (a source sweep of DeepSpeed 0.9.5, 0.14.4 and 0.19.8).

Formats, read at their sources:
- launcher/runner.py (0.9-0.19), printed with print(), no logger prefix: "Detected CUDA_VISIBLE_DEVICES=2,4
  but ignoring it because one or several of --include/--exclude/--num_gpus/--num_nodes cl args were used.
  If you want to use CUDA_VISIBLE_DEVICES don't pass any of these arguments to deepspeed." (0.15+ words it
  "Detected VISIBLE_DEVICES=...", the accelerator's variable): the runner drops the user's device list and
  starts ranks on GPUs 0..N-1 (accelerate launch with DeepSpeed passes --num_gpus itself). A weak
  driver_env finding (RUN530): any failure it leads to speaks first. Its sibling "...: setting
  --include=localhost:2,4" is the healthy case and stays silent.
- launcher/runner.py _parse_hostfile: the ERROR logged before its ValueError, "Bad hostfile text: [...]"
  (RUN304 as the raise itself, rules/launch_start.py); "Unable to detect suitable master address via
  'hostname -I'" as logger.error words it (single quotes; the raise after it uses backquotes: RUN224).
- launcher/runner.py parse_num_nodes / main: "MIN:MAX format is only supported in elastic training",
  "num_nodes 2:4 is not in MIN:MAX format", "Launching training without ssh, but --node_rank is not set
  correctly."; launcher/multinode_runner.py validate_args (OpenMPI, MPICH, IMPI, Slurm, MVAPICH runners):
  "openmpi backend does not support worker include/exclusion", "... does not support limiting num
  nodes/gpus" (RUN390: the launcher's arguments do not fit the launcher).
- pdsh (the runner's default multi-node launcher) "pdsh@worker-0: worker-1: ssh exited with exit code 1":
  the remote deepspeed.launcher.launch exited non-zero, so a rank on that host failed (RUN133, weak; 255
  is ssh's own failure: rules/remote_launch.py).
- comm/comm.py mpi_discovery (0.3-0.19), reached when init_distributed finds no RANK / WORLD_SIZE (the
  script was run with python, not a launcher): "ModuleNotFoundError: No module named 'mpi4py'" in a
  traceback through mpi_discovery, or after "attempting to detect MPI environment..." (RUN224).
- runtime/engine.py _do_args_sanity_check / _set_distributed_vars (0.3-0.19): "DeepSpeed requires the
  LOCAL_RANK environment variable, it is set by the deepspeed launcher, ..." and "LOCAL_RANK (0) !=
  OMPI_COMM_WORLD_LOCAL_RANK (1), not sure how to proceed as we're seeing conflicting local rank info."
  (RUN224).
- accelerator/real_accelerator.py (0.10-0.19): "DS_ACCELERATOR must be one of [...]", "NPU_Accelerator
  requires torch_npu, which is not installed on this system." (XPU: intel_extension_for_pytorch, MPS,
  HPU: habana_frameworks, MLU: torch_mlu, SDAA: torch_sdaa) (RUN531); runtime/zero/stage_1_and_2.py and
  stage3.py (0.10-0.19): "Accelerator is not detected, cannot perform low precision training (e.g., fp16,
  bf16)." and "Cannot use fp16 without accelerator." (no GPU visible to the rank: RUN262).
- ZeRO-3's and ZeRO-1/2's runtime checks (tracing error, inflight params, unused parameters) are read by
  rules/zero3_runtime.py.
- runtime/engine.py _checkpoint_tag_validation: "[rank=3] The checkpoint tag name 'x' is not consistent across
  all ranks." (RUN201: the ranks disagree; weak when only warned).
- ops/op_builder/builder.py: "PyTorch/CUDA/HIP version mismatch! DeepSpeed ops were compiled and installed
  with a different version ...", "Unable to JIT load the X op due to ninja not being installed." / "... due
  to it not being compatible due to hardware/software issue." (RUN296). The builder's import-time warnings
  (" [WARNING]  async_io requires the dev libaio ...", sparse_attn's torch range, triton) stay silent.
Healthy lines the sweep keeps silent: the launcher's INFO (WORLD INFO DICT, Setting CUDA_VISIBLE_DEVICES,
"Process N exits successfully.", the NCCL_* env dump), init_distributed's INFO, the config print, the
accelerator's auto-detect, fp16 overflow skips, ds_report's tables
(tests/diagnose/test_deepspeed_families.py).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_VISIBLE_IGNORED = lazy_re.compile(
    r"Detected (?P<var>(?:CUDA_)?VISIBLE_DEVICES)=(?P<devs>[\w,-]*) but ignoring it because one or "
    r"several of --include/--exclude/--num_gpus/--num_nodes"
)


def _visible_ignored(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    devs = m.group("devs")
    return [
        row.event(
            hit,
            f"DeepSpeed's launcher ignored {m.group('var')}={devs} because --include/--exclude/--num_gpus/"
            "--num_nodes was given (accelerate launch passes --num_gpus itself): its ranks run on GPUs "
            f"0..N-1, not on {devs}; pass the GPUs as --include localhost:{devs} instead",
            {"visible_devices": devs, "launcher": "deepspeed", "reason": "visible_devices_ignored"},
            dedupe=(row.code, "visible_ignored"),
        )
    ]


_BAD_HOSTFILE = lazy_re.compile(r"Bad hostfile text: (?P<text>.{0,200})")


def _bad_hostfile(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"DeepSpeed's launcher cannot read its hostfile ({clip(m.group('text'), 100)}): every line "
            "must be 'hostname slots=N', one per host",
            {"launcher": "deepspeed", "reason": "hostfile_malformed"},
            dedupe=(row.code, "hostfile"),
        )
    ]


_MASTER_ADDR = lazy_re.compile(
    r"Unable to detect suitable master address via 'hostname -I'|"
    r"Master Addr is required when elastic training"
)
_LOCAL_RANK = lazy_re.compile(
    r"(?P<what>DeepSpeed requires the LOCAL_RANK environment variable|"
    r"LOCAL_RANK \((?P<lr>\d+)\) != OMPI_COMM_WORLD_LOCAL_RANK \((?P<olr>\d+)\))"
)


def _env(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text or "assert " in hit.text:
        return []  # the traceback's source line; the exception's own line follows
    what = m.group(0)
    if what.startswith(("Unable", "Master Addr")):
        how = "pass --master_addr (rank 0's address) to the deepspeed launcher"
    elif what.startswith("DeepSpeed requires"):
        how = (
            "start the script with a launcher (deepspeed, torchrun, mpirun, srun) or set LOCAL_RANK, RANK, "
            "WORLD_SIZE, MASTER_ADDR and MASTER_PORT yourself"
        )
    else:
        how = (
            "two launchers set the local rank (mpirun's OMPI_* and torchrun's or the script's LOCAL_RANK): "
            "use one"
        )
    return [
        row.event(
            hit,
            f"{hit.who()}: DeepSpeed could not read the job's place in the world ({clip(what, 90)}): {how}",
            {"problem": clip(what, 90), "reason": "launcher_env_missing", "framework": "deepspeed"},
            dedupe=(row.code, "ds_env"),
        )
    ]


_MPI4PY = lazy_re.compile(r"No module named 'mpi4py'|No module named mpi4py\b")
_DISCOVERY = lazy_re.compile(r"in mpi_discovery|attempting to detect MPI environment|deepspeed/comm/comm\.py")


def _mpi4py(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_DISCOVERY.search(ln.text) for ln in hit.before(24, same_rank=False)):
        return None  # mpi4py missing for a job that asked for MPI itself: not this family
    return [
        row.event(
            hit,
            "DeepSpeed's init_distributed found no RANK / WORLD_SIZE / MASTER_ADDR in the environment (the "
            "script was started with python, not a launcher) and fell back to MPI discovery, which needs "
            "mpi4py: start it with deepspeed, torchrun or mpirun",
            {
                "problem": "no launcher environment; MPI discovery without mpi4py",
                "reason": "launcher_env_missing",
            },
            dedupe=(row.code, "ds_env"),
        )
    ]


_LAUNCHER_ARGS = lazy_re.compile(
    r"(?P<what>\w+ backend does not support (?:worker include/exclusion|limiting num nodes/gpus)|"
    r"MIN:MAX format is only supported in elastic training|num_nodes \S+ is not in MIN:MAX format|"
    r"Launching training without ssh, but --node_rank is not set correctly|"
    r"slurm backend (?:cannot select specific device ids|needs the same slot count on every host))"
)


def _launcher_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text or "assert " in hit.text:
        return []
    return [
        row.event(
            hit,
            f"DeepSpeed's launcher refused its arguments: {m.group('what')} (the MPI and Slurm launchers "
            "take the hosts from their own hostfile / allocation: drop --include/--exclude/--num_nodes/"
            "--num_gpus; elastic MIN:MAX needs elastic training; --no_ssh needs --node_rank on each node)",
            {"launcher": "deepspeed", "reason": "launcher_arguments"},
            dedupe=(row.code, "launcher_args"),
        )
    ]


_PDSH_EXIT = lazy_re.compile(r"pdsh@[\w.-]+: (?P<host>[\w.-]+): ssh exited with exit code (?P<code>\d+)")


def _pdsh_exit(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    code = int(m.group("code"))
    if code in (0, 255):
        return None  # 255 is ssh's own failure (rules/remote_launch.py)
    host = m.group("host")
    return [
        row.event(
            hit,
            f"the DeepSpeed launcher on {host} exited with code {code} (pdsh): a rank on {host} failed; "
            "its own error is in that host's output above",
            {"host": host, "exitcode": code, "reporter": "pdsh"},
            dedupe=(row.code, "pdsh", host),
        )
    ]


_ACCEL = lazy_re.compile(
    r"(?P<what>DS_ACCELERATOR must be one of \[[^\]]{0,200}\]|"
    r"(?P<acc>\w+)_Accelerator requires (?:(?P<pkg>[\w.]+), which is not installed on this system|"
    r"(?P<pkg2>PyTorch with XPU support)))"
)


def _accel(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text:
        return []
    pkg = m.group("pkg") or m.group("pkg2")
    what = (
        f"the {m.group('acc')} accelerator needs {pkg}, which is not installed"
        if pkg
        else "DS_ACCELERATOR names no accelerator DeepSpeed knows"
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: DeepSpeed cannot set up its accelerator: {what}; install the vendor's torch "
            "extension or set DS_ACCELERATOR to the device this machine has (cuda, cpu, xpu, npu, hpu, mps)",
            {"accelerator": m.group("acc") or "", "package": pkg or "", "framework": "deepspeed"},
            dedupe=(row.code, "accel"),
        )
    ]


_NO_ACCEL = lazy_re.compile(
    r"Accelerator is not detected, cannot perform low precision training|Cannot use fp16 without accelerator"
)


def _no_accel(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text:
        return []
    return [
        row.event(
            hit,
            f"{hit.who()}: DeepSpeed's ZeRO optimizer found no GPU (its accelerator is the CPU): the rank "
            "sees no device (CUDA_VISIBLE_DEVICES, the container's --gpus, a CPU-only torch) or "
            "DS_ACCELERATOR=cpu",
            {"framework": "deepspeed", "reason": "no_accelerator"},
            dedupe=(row.code, "no_accel"),
        )
    ]


# runtime/engine.py _checkpoint_tag_validation (0.3-0.19): save_checkpoint all-reduces a hash of the tag and
# "[rank=3] The checkpoint tag name 'x' is not consistent across all ranks. Including rank unique information
# in checkpoint tag could cause issues when restoring with different world sizes." is raised (AssertionError,
# checkpoint.tag_validation "Fail") or logged (the default "Warn": the ranks save, and later load, different
# directories). The ranks disagree: RUN201, weak when only warned.
_TAG = lazy_re.compile(
    r"(?:\[rank=(?P<rank>\d+)\] )?The checkpoint tag name '(?P<tag>[^']{0,200})' is not consistent "
    r"across all ranks"
)


def _tag(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "msg = " in hit.text:
        return []  # the source line of a traceback
    rank = int(m.group("rank")) if m.group("rank") else None
    warned = "WARNING" in hit.text and "Error" not in hit.text
    facts = {"kind": "checkpoint_tag_differs", "framework": "deepspeed", "tag": m.group("tag")}
    if rank is not None:
        facts["rank"] = rank
    return [
        row.event(
            hit,
            f"{hit.who(rank)}: the checkpoint tag '{clip(m.group('tag'), 60)}' differs across ranks (a time "
            "stamp or a rank in the tag): every rank must pass the same tag to save_checkpoint/"
            "load_checkpoint, or the ranks write and read different directories",
            facts,
            rank=rank,
            tier=1 if warned else None,
            dedupe=(row.code, "ckpt_tag"),
        )
    ]


# ops/op_builder/builder.py (0.9-0.19): the prebuilt ops' check against the runtime ("PyTorch version
# mismatch! DeepSpeed ops were compiled and installed with a different version than what is being used at
# runtime. ... Install torch version=2.0, Runtime torch version=2.1", the same for "CUDA version" and "HIP
# version") and the JIT load's refusals ("Unable to JIT load the fused_adam op due to ninja not being
# installed.", "... due to it not being compatible due to hardware/software issue. <the op's own reason>"):
# RUN296, as build_fit reads the builder's other checks (CUDA_HOME, "Installed CUDA version ... does not
# match"). The CPU optimizers' __del__ after their op never loaded (ops/adam/cpu_adam.py 0.5-0.19, adagrad,
# lion): "AttributeError: 'DeepSpeedCPUAdam' object has no attribute 'ds_opt_adam'", often a title alone.
_OPS = lazy_re.compile(
    r"(?P<what>PyTorch|CUDA|HIP) version mismatch! DeepSpeed ops were compiled and installed with a "
    r"different version(?:.*?Install \w+ version=(?P<built>[\w.]+), Runtime \w+ version=(?P<run>[\w.]+))?|"
    r"Unable to JIT load the (?P<op>\w+) op due to (?P<why>ninja not being installed|it not being compatible "
    r"due to hardware/software issue\.?(?P<log>.{0,160}))|"
    r"'(?P<cls>DeepSpeedCPU\w+)' object has no attribute '(?P<handle>ds_opt_\w+)'"
)


def _ops(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if "raise " in hit.text:
        return []
    if m.group("what"):
        what = m.group("what")
        facts = {"reason": "deepspeed_ops_version_mismatch", "component": what.lower()}
        if m.group("built"):
            facts.update(built_with=m.group("built"), runtime=m.group("run"))
        msg = (
            f"DeepSpeed's prebuilt ops were compiled against another {what} version than the one running"
            + (f" ({m.group('built')} vs {m.group('run')})" if m.group("built") else "")
            + ": reinstall deepspeed in this environment (DS_BUILD_OPS=0 pip install --force-reinstall "
            "deepspeed) or switch back to the torch it was built with"
        )
        return [row.event(hit, msg, facts, dedupe=(row.code, "ds_ops"))]
    if m.group("cls"):
        msg = (
            f"DeepSpeed's {m.group('cls')} has no {m.group('handle')}: its C++ op never built or loaded (the "
            "JIT build's output above says why: CUDA_HOME, the compiler, a toolkit that does not fit torch)"
        )
        return [row.event(hit, msg, {"reason": "deepspeed_op_not_loaded"}, dedupe=(row.code, "ds_ops"))]
    op, why = m.group("op"), m.group("why")
    if why.startswith("ninja"):
        msg = f"DeepSpeed cannot JIT-build its {op} op: ninja is not installed (pip install ninja)"
    else:
        reason = (m.group("log") or "").strip()
        msg = f"DeepSpeed cannot JIT-build its {op} op on this machine" + (
            f": {clip(reason, 120)}" if reason else ""
        )
    return [
        row.event(hit, msg, {"reason": "deepspeed_op_unbuildable", "op": op}, dedupe=(row.code, "ds_ops", op))
    ]


SIGNATURES: tuple[Signature, ...] = (
    Signature(
        "deepspeed visible devices ignored",
        _VISIBLE_IGNORED,
        _visible_ignored,
        C.DS_VISIBLE_DEVICES_IGNORED.code,
        tier=1,  # a launcher's choice, not yet a failure: the failure it leads to speaks first
        anchors=(b"but ignoring it because one or several of",),
        words=("but ignoring it because one or several of",),
    ),
    Signature(
        "deepspeed bad hostfile text",
        _BAD_HOSTFILE,
        _bad_hostfile,
        C.LAUNCH_FAILED.code,
        anchors=(b"Bad hostfile text: ",),
        words=("bad hostfile text: ",),
    ),
    Signature(
        "deepspeed master address (logged)",
        _MASTER_ADDR,
        _env,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"Unable to detect suitable master address via", b"Master Addr is required when elastic"),
        words=("unable to detect suitable master address via", "master addr is required when elastic"),
    ),
    Signature(
        "deepspeed local rank environment",
        _LOCAL_RANK,
        _env,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"DeepSpeed requires the LOCAL_RANK environment", b") != OMPI_COMM_WORLD_LOCAL_RANK ("),
        words=("deepspeed requires the local_rank environment", ") != ompi_comm_world_local_rank ("),
    ),
    Signature(
        "deepspeed mpi discovery without mpi4py",
        _MPI4PY,
        _mpi4py,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"No module named 'mpi4py'", b"No module named mpi4py"),
        words=("mpi4py",),
    ),
    Signature(
        "deepspeed launcher arguments",
        _LAUNCHER_ARGS,
        _launcher_args,
        C.LAUNCHER_RESOURCES.code,
        anchors=(
            b"backend does not support worker include/exclusion",
            b"backend does not support limiting num nodes/gpus",
            b"MIN:MAX format",
            b"Launching training without ssh, but --node_rank",
            b"slurm backend cannot select specific device ids",
            b"slurm backend needs the same slot count",
        ),
        words=(
            "backend does not support",
            "min:max format",
            "launching training without ssh",
            "slurm backend ",
        ),
    ),
    Signature(
        "pdsh remote exit",
        _PDSH_EXIT,
        _pdsh_exit,
        C.RANK_EXITED.code,
        tier=1,  # the host's own error, when pasted, names the cause
        anchors=(b": ssh exited with exit code ",),
        words=(": ssh exited with exit code ",),
    ),
    Signature(
        "deepspeed accelerator unavailable",
        _ACCEL,
        _accel,
        C.DS_ACCELERATOR_UNAVAILABLE.code,
        anchors=(b"DS_ACCELERATOR must be one of", b"_Accelerator requires "),
        words=("ds_accelerator must be one of", "_accelerator requires "),
    ),
    Signature(
        "deepspeed zero without accelerator",
        _NO_ACCEL,
        _no_accel,
        C.NO_CUDA_DEVICE.code,
        anchors=(b"Accelerator is not detected, cannot perform", b"Cannot use fp16 without accelerator"),
        words=("accelerator is not detected, cannot perform", "cannot use fp16 without accelerator"),
    ),
    Signature(
        "deepspeed checkpoint tag differs across ranks",
        _TAG,
        _tag,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"' is not consistent across all ranks",),
        words=("' is not consistent across all ranks",),
    ),
    Signature(
        "deepspeed ops do not fit the runtime",
        _OPS,
        _ops,
        C.CUDA_TOOLKIT_MISMATCH.code,
        anchors=(
            b"version mismatch! DeepSpeed ops were compiled",
            b"Unable to JIT load the ",
            b"attribute 'ds_opt_",
        ),
        words=(
            "version mismatch! deepspeed ops were compiled",
            "unable to jit load the ",
            "attribute 'ds_opt_",
        ),
    ),
)
parse = gated_reader(SIGNATURES)

"""The steps of the GPU acceptance run, as data: what each runs and under which timeout.

A command's argv may hold {py} (this Python), {work} (the step's folder, bundled into the output)
and {entry} (the small model of verify and bench scaling). `pgdoctor` commands are parsed by the
dry run against this tree's CLI; `module` commands are this package's children, which the dry run
imports (they import only the standard library at the top).
"""

from __future__ import annotations

from dataclasses import dataclass, field

# The whole run, setup included, must fit one device call with time to spare for a rerun.
BUDGET_S = 8 * 60
SETUP_S = 40
ENTRY = "pgdoctor.verify.examples:mlp"


@dataclass(frozen=True)
class Cmd:
    label: str  # file stem of its output in the step's folder
    argv: tuple[str, ...]
    timeout_s: float
    ok_rcs: tuple[int, ...] = (0,)


@dataclass(frozen=True)
class Step:
    number: int
    name: str
    what: str
    cmds: tuple[Cmd, ...] = field(default=())

    @property
    def timeout_s(self) -> float:
        return sum(c.timeout_s for c in self.cmds)

    @property
    def bundle(self) -> str:
        return f"step{self.number}-{self.name}.tar.gz"


def _pg(*args: str) -> tuple[str, ...]:
    return ("pgdoctor", *args)


def _mod(module: str, *args: str) -> tuple[str, ...]:
    return ("{py}", "-m", f"scripts.gpu_acceptance.{module}", *args)


STEPS: tuple[Step, ...] = (
    Step(
        1,
        "nvml",
        "every GPU probe against the real NVML; raw answers recorded and replayed",
        (
            Cmd(
                "check",
                _pg(
                    "check",
                    "--level",
                    "full",
                    "--json",
                    "--timeout",
                    "45",
                    "-o",
                    "{work}/check.json",
                    "--exit-zero",
                ),
                50,
            ),
            Cmd(
                "collect",
                _pg("collect", "--level", "quick", "--timeout", "12", "-o", "{work}/snapshot.json"),
                15,
            ),
            Cmd(
                "check-from",
                _pg(
                    "check",
                    "--from",
                    "{work}/snapshot.json",
                    "--json",
                    "-o",
                    "{work}/check_from.json",
                    "--exit-zero",
                ),
                10,
            ),
            Cmd("record", _mod("nvml_step", "{work}"), 15),
        ),
    ),
    Step(
        2,
        "collectives",
        "the NCCL collective path at world size 1: busbw, latency, correctness",
        (
            Cmd(
                "bench",
                _pg(
                    "bench",
                    "collectives",
                    "--backend",
                    "nccl",
                    "--nproc",
                    "1",
                    "--max-bytes",
                    "256M",
                    "--iters",
                    "10",
                    "--warmup",
                    "3",
                    "--timeout",
                    "30",
                    "--json",
                ),
                60,
                ok_rcs=(0, 1),
            ),
        ),
    ),
    # The lab needs 2 ranks; on one GPU they share it through gloo (lab/worker.py), so the OOM is
    # still the CUDA caching allocator's own.
    Step(
        3,
        "oom",
        "the CUDA allocator's OOM through `repro`, its memory_summary and the diagnosis",
        (
            Cmd(
                "repro",
                _pg(
                    "repro",
                    "oom",
                    "--parallel",
                    "ddp",
                    "--nproc",
                    "2",
                    "--device",
                    "cuda",
                    "--timeout",
                    "50",
                    "--json",
                ),
                60,
                ok_rcs=(1,),
            ),
        ),
    ),
    Step(
        4,
        "flight",
        "a real NCCL flight-recorder dump, compared field by field with the test fixtures",
        (
            Cmd("dump", _mod("fr_child", "{work}"), 35),
            Cmd(
                "diagnose",
                _pg(
                    "diagnose", "--flight-recorder", "{work}/dumps", "--json", "--timeout", "8", "--exit-zero"
                ),
                10,
            ),
        ),
    ),
    Step(
        5,
        "verify",
        "verify and bench scaling over NCCL; the hang tiers on a CUDA rank",
        (
            Cmd(
                "verify",
                _pg(
                    "verify",
                    ENTRY,
                    "--backend",
                    "nccl",
                    "--nproc",
                    "1",
                    "--steps",
                    "2",
                    "--timeout",
                    "30",
                    "--json",
                ),
                35,
            ),
            Cmd(
                "scaling",
                _pg(
                    "bench",
                    "scaling",
                    ENTRY,
                    "--backend",
                    "nccl",
                    "--nproc",
                    "1",
                    "--steps",
                    "3",
                    "--timeout",
                    "30",
                    "--json",
                ),
                35,
            ),
            # Runs without `pgdoctor hang` too (its rows then say "not available in this tree").
            Cmd("hang", _mod("hang_step", "{work}"), 45),
        ),
    ),
    Step(
        6,
        "nvtx",
        "pgdoctor.range under Nsight Compute (ncu), the NVIDIA tool the node has",
        (Cmd("ncu", _mod("nvtx_step", "{work}"), 60),),
    ),
)


def total_s() -> float:
    return SETUP_S + sum(s.timeout_s for s in STEPS)

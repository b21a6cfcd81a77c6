"""What a lab run is: fault, strategy, ranks and sizes. Serialised to JSON on each rank's
command line, so the worker needs nothing else."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

from pgdoctor.lab import FAULTS, STRATEGIES


@dataclass(frozen=True)
class LabSpec:
    fault: str  # oom | timeout | imbalance | none
    strategy: str  # ddp | pp | tp
    nproc: int
    run_dir: str  # per-rank results, flight-recorder dumps, dump requests
    trace_dir: str = ""  # per-rank event files; "" = no trace
    factor: float = 2.0  # imbalance: work of the slow rank / stage / shard against the others
    faulty_rank: int = -1  # -1: the last rank
    steps: int = 0  # 0: the fault's default
    device: str = "cpu"  # cpu | cuda
    schedule: str = "1f1b"  # pp: gpipe | 1f1b
    microbatches: int = 4  # pp
    width: int = 512
    batch: int = 256  # per step (pp: split into micro-batches); tens of ms of compute per step
    pg_timeout_s: float = 5.0
    fault_step: int = 2  # timeout: the step whose collective the faulty rank delays
    oom_headroom_mb: int = 96  # oom on CPU: address space allowed above what the rank has mapped
    keep: bool = (
        False  # run_dir is kept (repro --keep/--trace-dir): rank logs are written there and cited by path
    )

    def __post_init__(self) -> None:
        if self.fault not in (*FAULTS, "none"):
            raise ValueError(f"unknown fault {self.fault!r} (known: {', '.join(FAULTS)})")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r} (known: {', '.join(STRATEGIES)})")
        if not 2 <= self.nproc <= 64:
            raise ValueError(f"--nproc must be between 2 and 64, not {self.nproc}")
        if self.factor < 1.0:
            raise ValueError(f"--factor must be at least 1, not {self.factor}")
        if not -1 <= self.faulty_rank < self.nproc:
            raise ValueError(f"faulty rank {self.faulty_rank} is not a rank of {self.nproc}")
        if self.schedule not in ("gpipe", "1f1b"):
            raise ValueError(f"unknown pipeline schedule {self.schedule!r} (gpipe, 1f1b)")
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"unknown device {self.device!r} (cpu, cuda)")

    @property
    def bad_rank(self) -> int:
        return self.nproc - 1 if self.faulty_rank < 0 else self.faulty_rank

    @property
    def n_steps(self) -> int:
        if self.steps:
            return self.steps
        return {"oom": 14, "timeout": self.fault_step + 2, "imbalance": 8, "none": 3}[self.fault]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LabSpec:
        data: dict[str, Any] = json.loads(text)
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

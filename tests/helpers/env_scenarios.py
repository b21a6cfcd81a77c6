"""For each foundation code: the one variable, limit or file that triggers it (bad) and the
same setting made right (good). Shared by tests/checks/test_env_checks.py (live probes) and
tests/helpers/make_env_fixtures.py (the --from fixture snapshots)."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional

BASE_ENV = {
    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
    "NCCL_DEBUG": "WARN",
    "TORCH_FR_BUFFER_SIZE": "2000",
}
LAUNCH = {
    "RANK": "0",
    "WORLD_SIZE": "2",
    "LOCAL_RANK": "0",
    "LOCAL_WORLD_SIZE": "2",
    "MASTER_ADDR": "127.0.0.1",
    "MASTER_PORT": "29511",
}


@dataclass(frozen=True)
class Case:
    env: Mapping[str, str] = field(default_factory=dict)  # added to BASE_ENV
    unset: tuple[str, ...] = ()  # removed from BASE_ENV
    gpus: int = 0
    rdma: int = 0
    ifaces: Optional[Mapping[str, tuple[str, int]]] = None
    meminfo: Optional[str] = None
    rlimits: Mapping[str, int] = field(default_factory=dict)
    cpus: Optional[list[int]] = None
    shm_bytes: Optional[int] = None  # mount a tmpfs of this size at <root>/dev/shm (root only)
    hide_torch: bool = False
    config: Mapping[str, Any] = field(default_factory=dict)
    listen_master_port: bool = False
    # Measurements a CPU-only machine cannot produce (a CUDA torch without NCCL, say), set on
    # the snapshot after probing, in the probe's exact key and type. Such cases have no live test.
    override: Mapping[str, Any] = field(default_factory=dict)

    @property
    def needs_child(self) -> bool:
        return bool(self.rlimits or self.cpus is not None or self.hide_torch)

    def full_env(self) -> dict[str, str]:
        env = {k: v for k, v in BASE_ENV.items() if k not in self.unset}
        env.update(self.env)
        return env


@dataclass(frozen=True)
class Scenario:
    bad: Case
    good: Case
    level: str = "quick"


GPU_ENV = {**LAUNCH}
LOW_MEM = "MemTotal:       263855104 kB\nMemAvailable:    13000000 kB\n"
DOWN = {"lo": ("unknown", 0x9), "eth0": ("down", 0x1002)}

SCENARIOS: dict[str, Scenario] = {
    "ENV101": Scenario(Case(hide_torch=True), Case()),
    "ENV102": Scenario(Case(gpus=2), Case(gpus=0)),
    "ENV103": Scenario(
        Case(config={"software.min_torch": "99.0"}), Case(config={"software.min_torch": "2.2"})
    ),
    "ENV104": Scenario(
        Case(gpus=8, override={"software.torch.cuda_compiled": True, "software.torch.nccl_available": False}),
        Case(gpus=8, override={"software.torch.cuda_compiled": True, "software.torch.nccl_available": True}),
        level="standard",
    ),
    "ENV105": Scenario(
        Case(override={"software.torch.distributed_available": False}),
        Case(override={"software.torch.distributed_available": True}),
        level="standard",
    ),
    "ENV201": Scenario(Case(env={"RANK": "0"}), Case(env={"RANK": "0", "WORLD_SIZE": "1"})),
    "ENV202": Scenario(Case(env={**LAUNCH, "RANK": "zero"}), Case(env=LAUNCH)),
    "ENV203": Scenario(
        Case(env={**LAUNCH, "SLURM_PROCID": "1", "SLURM_NTASKS": "2"}),
        Case(env={**LAUNCH, "SLURM_PROCID": "0", "SLURM_NTASKS": "2"}),
    ),
    "ENV204": Scenario(Case(env={**LAUNCH, "RANK": "2"}), Case(env={**LAUNCH, "RANK": "1"})),
    "ENV205": Scenario(
        Case(env={**LAUNCH, "LOCAL_WORLD_SIZE": "4", "WORLD_SIZE": "4"}, gpus=2), Case(env=LAUNCH, gpus=2)
    ),
    "ENV206": Scenario(Case(env={**LAUNCH, "MASTER_ADDR": "no-such-master.invalid"}), Case(env=LAUNCH)),
    "ENV207": Scenario(Case(env=LAUNCH, listen_master_port=True), Case(env=LAUNCH)),
    "ENV301": Scenario(
        Case(env={"CUDA_VISIBLE_DEVICES": "0,,1"}, gpus=2), Case(env={"CUDA_VISIBLE_DEVICES": "0,1"}, gpus=2)
    ),
    "ENV302": Scenario(
        Case(env={"CUDA_VISIBLE_DEVICES": "1,1"}, gpus=2), Case(env={"CUDA_VISIBLE_DEVICES": "1,0"}, gpus=2)
    ),
    "ENV303": Scenario(
        Case(env={"CUDA_VISIBLE_DEVICES": "0,4"}, gpus=2), Case(env={"CUDA_VISIBLE_DEVICES": "0,1"}, gpus=2)
    ),
    "ENV304": Scenario(
        Case(env={"CUDA_VISIBLE_DEVICES": ""}, gpus=2), Case(env={"CUDA_VISIBLE_DEVICES": "0"}, gpus=2)
    ),
    "ENV401": Scenario(Case(env={"NCCL_SOCKET_IFNAME": "ib0"}), Case(env={"NCCL_SOCKET_IFNAME": "eth"})),
    "ENV402": Scenario(
        Case(env={"NCCL_SOCKET_IFNAME": "eth"}, ifaces=DOWN), Case(env={"NCCL_SOCKET_IFNAME": "eth"})
    ),
    "ENV403": Scenario(Case(env={"NCCL_IB_DISABLE": "1"}), Case(env={"NCCL_IB_DISABLE": "0"})),
    "ENV404": Scenario(Case(unset=("NCCL_DEBUG",), gpus=2), Case(gpus=2)),
    "ENV405": Scenario(
        Case(env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "0"}), Case(env={"TORCH_NCCL_ASYNC_ERROR_HANDLING": "3"})
    ),
    "ENV406": Scenario(
        Case(env={"TORCH_NCCL_BLOCKING_WAIT": "maybe"}), Case(env={"TORCH_NCCL_BLOCKING_WAIT": "0"})
    ),
    "ENV407": Scenario(Case(env={"TORCH_FR_BUFFER_SIZE": "0"}), Case(unset=("TORCH_FR_BUFFER_SIZE",))),
    "ENV408": Scenario(Case(env={"TORCH_NCCL_BLOCKING_WAIT": "1"}), Case()),
    "ENV420": Scenario(
        Case(env={"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync,max_split_size_mb:512"}),
        Case(env={"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}),
    ),
    "ENV501": Scenario(Case(shm_bytes=64 << 20), Case(shm_bytes=8 << 30)),
    # Raising a hard limit needs CAP_SYS_RESOURCE, which containers often drop: the good case
    # states "unlimited" in the probe's own format instead of setting it.
    "ENV502": Scenario(
        Case(rdma=1, rlimits={"memlock": 64 << 10}),
        Case(rdma=1, override={"host.rlimit.memlock.soft": "unlimited"}),
    ),
    "ENV503": Scenario(Case(rlimits={"nofile": 1024}), Case(rlimits={"nofile": 8192})),
    "ENV504": Scenario(Case(meminfo=LOW_MEM), Case()),
    "ENV505": Scenario(
        Case(env=LAUNCH, cpus=[0]), Case(env={**LAUNCH, "LOCAL_WORLD_SIZE": "1", "WORLD_SIZE": "1"}, cpus=[0])
    ),
}


@contextmanager
def listening(port: int) -> Iterator[None]:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
        s.listen(1)
        yield
    finally:
        s.close()

"""Host limits: shared memory, locked memory, open files, free memory, CPUs per local rank."""

from __future__ import annotations

from pgdoctor.checks.base import Config, check, config_key, evidence_of, register_code
from pgdoctor.checks.launch import env_vars
from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.knowledge.units import fmt_bytes
from pgdoctor.model import Finding, Snapshot

ENV501 = register_code("ENV501", "dev-shm-too-small", "fail", "capacity", "/dev/shm is too small", "host")
ENV502 = register_code(
    "ENV502", "memlock-limited", "warn", "configuration", "Locked-memory limit is not unlimited", "host"
)
ENV503 = register_code(
    "ENV503", "open-files-limit-low", "warn", "configuration", "Open-files limit is low", "host"
)
ENV504 = register_code(
    "ENV504", "host-memory-low", "warn", "capacity", "Little host memory available", "host"
)
ENV505 = register_code(
    "ENV505", "cpus-fewer-than-local-ranks", "warn", "performance", "Fewer CPUs than local ranks need", "host"
)

MIN_SHM = config_key("host.min_shm_bytes", int, 1 << 30, "Smallest /dev/shm accepted, in bytes.")
MIN_NOFILE = config_key("host.min_open_files", int, 8192, "Smallest RLIMIT_NOFILE soft limit accepted.")
MIN_AVAIL = config_key(
    "host.min_available_memory_fraction", float, 0.10, "Smallest MemAvailable/MemTotal accepted."
)
CPUS_PER_RANK = config_key(
    "host.min_cpus_per_rank", int, 1, "CPUs each local rank needs (data loading, NCCL threads)."
)


@check("host", [ENV501, ENV502, ENV503, ENV504], needs=["host"])
def host_limits(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    shm = snap.get("host.shm.total_bytes")
    if shm is not None and shm.ok and isinstance(shm.value, int) and shm.value < config[MIN_SHM.name]:
        out.append(
            ENV501.finding(
                f"/dev/shm is {fmt_bytes(shm.value)}, below {fmt_bytes(config[MIN_SHM.name])}",
                evidence=evidence_of(shm),
                facts={"shm_bytes": shm.value},
            )
        )
    memlock = snap.get("host.rlimit.memlock.soft")
    rdma = snap.value("host.rdma.device_count", 0)
    # Only RDMA registers (pins) memory at scale; on a host without RDMA devices the limit is moot.
    if rdma and memlock is not None and memlock.ok and memlock.value != "unlimited":
        out.append(
            ENV502.finding(
                f"locked-memory soft limit is {fmt_bytes(int(memlock.value))} on a host "  # type: ignore[arg-type]
                f"with {rdma} RDMA device(s)",
                evidence=evidence_of(memlock) + evidence_of(snap.get("host.rdma.device_count")),
                facts={"memlock_bytes": memlock.value, "rdma_devices": rdma},
            )
        )
    nofile = snap.get("host.rlimit.nofile.soft")
    if nofile is not None and isinstance(nofile.value, int) and nofile.value < config[MIN_NOFILE.name]:
        out.append(
            ENV503.finding(
                f"open-files soft limit is {nofile.value}, below {config[MIN_NOFILE.name]}",
                evidence=evidence_of(nofile),
                facts={"nofile": nofile.value},
            )
        )
    total, avail = snap.value("host.memory.total_bytes"), snap.value("host.memory.available_bytes")
    if (
        isinstance(total, int)
        and isinstance(avail, int)
        and total > 0
        and avail / total < config[MIN_AVAIL.name]
    ):
        out.append(
            ENV504.finding(
                f"{fmt_bytes(avail)} of {fmt_bytes(total)} available ({100 * avail / total:.0f}%)",
                evidence=evidence_of(snap.get("host.memory.available_bytes"))
                + evidence_of(snap.get("host.memory.total_bytes")),
                facts={"available_bytes": avail, "total_bytes": total},
            )
        )
    return out


@check("host", [ENV505], needs=["host", "environment"])
def cpus_per_rank(snap: Snapshot, config: Config) -> list[Finding]:
    info = parse_launch(env_vars(snap))
    cpus = snap.value("host.cpu.affinity_count")
    ranks = info.local_world_size
    if not ranks or not isinstance(cpus, int):
        return []
    need = ranks * config[CPUS_PER_RANK.name]
    if cpus >= need:
        return []
    return [
        ENV505.finding(
            f"{cpus} CPU(s) allowed for {ranks} local ranks (need {need})",
            evidence=evidence_of(snap.get("host.cpu.affinity_count")),
            facts={"cpus": cpus, "local_ranks": ranks, "needed": need},
        )
    ]

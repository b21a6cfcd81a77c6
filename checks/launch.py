"""Launch environment: the variables torch.distributed's env:// rendezvous reads, and Slurm's."""

from __future__ import annotations

from typing import Any

from pgdoctor.checks.base import Config, check, evidence_of, register_code
from pgdoctor.checks.software import gpu_count
from pgdoctor.checks.visible_devices import visible_gpu_count
from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.model import Evidence, Finding, Snapshot

ENV201 = register_code(
    "ENV201", "launch-env-incomplete", "fail", "rendezvous", "Launch variables set only in part", "launch"
)
ENV202 = register_code(
    "ENV202",
    "launch-env-malformed",
    "fail",
    "configuration",
    "Launch variable with an invalid value",
    "launch",
)
ENV203 = register_code(
    "ENV203",
    "launch-env-contradictory",
    "warn",
    "configuration",
    "torch and Slurm/MPI launch variables disagree",
    "launch",
)
ENV204 = register_code(
    "ENV204", "rank-out-of-range", "fail", "configuration", "Rank outside the world size", "launch"
)
ENV205 = register_code(
    "ENV205", "local-ranks-exceed-gpus", "fail", "driver_env", "More local ranks than visible GPUs", "launch"
)
ENV206 = register_code(
    "ENV206", "master-addr-unresolvable", "fail", "rendezvous", "MASTER_ADDR does not resolve", "launch"
)
ENV207 = register_code(
    "ENV207",
    "master-port-in-use",
    "fail",
    "rendezvous",
    "MASTER_PORT already in use on the master host",
    "launch",
)


def env_vars(snap: Snapshot) -> dict[str, str]:
    value = snap.value("env.vars", {})
    return dict(value) if isinstance(value, dict) else {}


def _ev(env: dict[str, str], *names: str) -> list[Evidence]:
    return [Evidence(f"{n}={env[n]}", key="env.vars") for n in names if n in env]


def _incomplete(env: dict[str, str]) -> list[Finding]:
    has = {n for n in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT") if env.get(n, "").strip()}
    if not has:
        return []
    missing = []
    if "RANK" in has and "WORLD_SIZE" not in has:
        missing.append("WORLD_SIZE")
    if "WORLD_SIZE" in has and "RANK" not in has:
        missing.append("RANK")
    try:
        multi = int(env.get("WORLD_SIZE", "1")) > 1
    except ValueError:
        multi = False
    if multi or {"MASTER_ADDR", "MASTER_PORT"} & has:
        missing += [n for n in ("MASTER_ADDR", "MASTER_PORT") if n not in has]
    if not missing:
        return []
    return [
        ENV201.finding(
            f"{', '.join(sorted(has))} set but {', '.join(missing)} missing",
            evidence=_ev(env, *sorted(has)),
            facts={"missing": missing, "set": sorted(has)},
        )
    ]


@check("launch", [ENV201, ENV202, ENV203, ENV204], needs=["environment"])
def launch_variables(snap: Snapshot, config: Config) -> list[Finding]:
    env = env_vars(snap)
    info = parse_launch(env)
    out = _incomplete(env)
    for name, raw in sorted(info.malformed.items()):
        out.append(
            ENV202.finding(f"{name}={raw!r} is not valid", evidence=_ev(env, name), facts={"variable": name})
        )
    if info.master_port is not None and not 0 < info.master_port < 65536:
        out.append(
            ENV202.finding(
                f"MASTER_PORT={info.master_port} is outside 1..65535",
                evidence=_ev(env, "MASTER_PORT"),
                facts={"variable": "MASTER_PORT"},
            )
        )
    if info.launcher != "torchrun":
        for torch_name, other in (
            ("RANK", "SLURM_PROCID"),
            ("WORLD_SIZE", "SLURM_NTASKS"),
            ("LOCAL_RANK", "SLURM_LOCALID"),
            ("RANK", "OMPI_COMM_WORLD_RANK"),
            ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
        ):
            a, b = env.get(torch_name, "").strip(), env.get(other, "").strip()
            if a and b and a.isdigit() and b.isdigit() and int(a) != int(b):
                out.append(
                    ENV203.finding(
                        f"{torch_name}={a} but {other}={b}",
                        evidence=_ev(env, torch_name, other),
                        facts={"variables": [torch_name, other]},
                    )
                )
    checks: list[tuple[str, Any, Any]] = [
        ("RANK", info.rank, info.world_size),
        ("LOCAL_RANK", info.local_rank, info.local_world_size),
    ]
    for name, rank, size in checks:
        if rank is not None and rank < 0:
            out.append(ENV204.finding(f"{name}={rank} is negative", evidence=_ev(env, name)))
        elif rank is not None and size is not None and rank >= size:
            out.append(
                ENV204.finding(
                    f"{name}={rank} is not below its world size {size}",
                    evidence=_ev(env, name, "WORLD_SIZE", "LOCAL_WORLD_SIZE", "SLURM_NTASKS"),
                    facts={"rank": rank, "size": size},
                )
            )
    if info.world_size is not None and info.world_size < 1:
        out.append(
            ENV204.finding(f"world size {info.world_size} is below 1", evidence=_ev(env, "WORLD_SIZE"))
        )
    return out


@check("launch", [ENV205], needs=["environment", "host"])
def local_ranks_vs_gpus(snap: Snapshot, config: Config) -> list[Finding]:
    env = env_vars(snap)
    info = parse_launch(env)
    host_gpus = gpu_count(snap)
    if host_gpus == 0 or not info.local_world_size:
        return []
    visible = visible_gpu_count(env.get("CUDA_VISIBLE_DEVICES"), host_gpus)
    if info.local_world_size <= visible:
        return []
    return [
        ENV205.finding(
            f"{info.local_world_size} local ranks but {visible} GPU(s) visible to this process",
            evidence=_ev(env, "LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE", "CUDA_VISIBLE_DEVICES")
            + evidence_of(snap.get("host.nvidia.gpu_count")),
            facts={
                "local_world_size": info.local_world_size,
                "visible_gpus": visible,
                "host_gpus": host_gpus,
            },
        )
    ]


@check("launch", [ENV206, ENV207], needs=["environment", "launch"])
def master_endpoint(snap: Snapshot, config: Config) -> list[Finding]:
    env = env_vars(snap)
    out = []
    resolved = snap.get("launch.master_addr.addresses")
    if resolved is not None and not resolved.ok:
        out.append(
            ENV206.finding(
                f"MASTER_ADDR={env.get('MASTER_ADDR', '?')} does not resolve from this host",
                evidence=_ev(env, "MASTER_ADDR") + evidence_of(resolved),
            )
        )
    in_use = snap.get("launch.master_port.in_use")
    if in_use is not None and in_use.value is True and snap.value("launch.launcher") != "torchrun":
        out.append(
            ENV207.finding(
                f"MASTER_PORT={env.get('MASTER_PORT', '?')} is already bound on this host, which is the "
                f"master",
                evidence=_ev(env, "MASTER_ADDR", "MASTER_PORT") + evidence_of(in_use),
                facts={"port": env.get("MASTER_PORT")},
            )
        )
    return out

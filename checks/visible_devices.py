"""CUDA_VISIBLE_DEVICES: what the CUDA runtime will make of it."""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.base import Config, check, evidence_of, register_code
from pgdoctor.checks.software import gpu_count
from pgdoctor.model import Evidence, Finding, Snapshot

ENV301 = register_code(
    "ENV301",
    "cuda-visible-devices-malformed",
    "fail",
    "driver_env",
    "CUDA_VISIBLE_DEVICES has a malformed entry",
    "knobs",
)
ENV302 = register_code(
    "ENV302",
    "cuda-visible-devices-duplicate",
    "fail",
    "driver_env",
    "CUDA_VISIBLE_DEVICES lists a device twice",
    "knobs",
)
ENV303 = register_code(
    "ENV303",
    "cuda-visible-devices-out-of-range",
    "fail",
    "driver_env",
    "CUDA_VISIBLE_DEVICES names a GPU this host does not have",
    "knobs",
)
ENV304 = register_code(
    "ENV304",
    "cuda-visible-devices-hides-all-gpus",
    "warn",
    "driver_env",
    "CUDA_VISIBLE_DEVICES hides every GPU",
    "knobs",
)

_UUID = re.compile(r"^(GPU|MIG)-[0-9A-Za-z-]+(/\d+/\d+)?$")


def parse_visible(raw: str) -> tuple[list[str], list[str]]:
    """(entries, malformed entries). Whitespace around commas is tolerated, as CUDA does."""
    entries = [e.strip() for e in raw.split(",")]
    bad = [e for e in entries if not (e.isdigit() or _UUID.match(e))]
    return entries, bad


def visible_gpu_count(raw: Optional[str], host_gpus: int) -> int:
    """GPUs the CUDA runtime will expose. CUDA stops at the first invalid entry."""
    if raw is None:
        return host_gpus
    if raw.strip() in ("", "-1"):
        return 0
    count, seen = 0, set()
    for e in (x.strip() for x in raw.split(",")):
        if e.isdigit():
            if int(e) >= host_gpus or e in seen:
                break
        elif not _UUID.match(e):
            break
        seen.add(e)
        count += 1
    return count


@check("knobs", [ENV301, ENV302, ENV303, ENV304], needs=["environment", "host"])
def cuda_visible_devices(snap: Snapshot, config: Config) -> list[Finding]:
    env = snap.value("env.vars", {}) or {}
    raw = env.get("CUDA_VISIBLE_DEVICES")
    if raw is None:
        return []
    ev = [Evidence(f"CUDA_VISIBLE_DEVICES={raw}", key="env.vars")]
    host_gpus = gpu_count(snap)
    if raw.strip() in ("", "-1"):
        if host_gpus > 0:
            return [
                ENV304.finding(
                    f"CUDA_VISIBLE_DEVICES={raw!r} leaves none of {host_gpus} GPU(s) visible",
                    evidence=ev + evidence_of(snap.get("host.nvidia.gpu_count")),
                )
            ]
        return []
    entries, bad = parse_visible(raw)
    out = []
    if bad:
        out.append(
            ENV301.finding(
                f"entries {bad} are neither indices nor GPU-/MIG- UUIDs",
                evidence=ev,
                facts={"malformed": bad},
            )
        )
    dups = sorted({e for e in entries if e and entries.count(e) > 1})
    if dups:
        out.append(
            ENV302.finding(
                f"listed more than once: {', '.join(dups)}", evidence=ev, facts={"duplicates": dups}
            )
        )
    if host_gpus > 0:
        beyond = [e for e in entries if e.isdigit() and int(e) >= host_gpus]
        if beyond:
            out.append(
                ENV303.finding(
                    f"indices {', '.join(beyond)} but this host has {host_gpus} GPU(s) (0..{host_gpus - 1})",
                    evidence=ev + evidence_of(snap.get("host.nvidia.gpu_count")),
                    facts={"out_of_range": beyond, "host_gpus": host_gpus},
                )
            )
    return out

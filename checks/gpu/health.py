"""GPU health rules over the NVML probe's measurements (probe `gpu`).

Each rule judges only what was measured: a field NVML did not support is Unavailable and the
rule stays silent for that GPU rather than guessing. Thresholds are config keys.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Optional

from pgdoctor.checks.base import Code, Config, check, config_key, evidence_of, register_code
from pgdoctor.checks.launch import env_vars
from pgdoctor.knowledge.launchenv import parse_launch
from pgdoctor.knowledge.units import fmt_bytes
from pgdoctor.model import Evidence, Finding, Measurement, Scope, Severity, Snapshot, Status, Unavailable

CHECK_GROUP = "gpu"  # the published prefix of this module's check names

AREA = "gpu"
HW = "gpu_hardware"


def _code(code: str, slug: str, severity: str, category: str, title: str) -> Code:
    return register_code(code, slug, severity, category, title, AREA)


GPU100 = _code("GPU100", "gpu-lost", "fail", HW, "NVML reports a GPU as lost")
GPU101 = _code(
    "GPU101",
    "gpu-ecc-uncorrected-volatile",
    "fail",
    HW,
    "Uncorrectable ECC errors since the last driver load",
)
GPU102 = _code(
    "GPU102",
    "gpu-ecc-uncorrected-aggregate",
    "info",
    HW,
    "Uncorrectable ECC errors in the GPU's lifetime history",
)
GPU103 = _code(
    "GPU103",
    "gpu-memory-repair-pending",
    "warn",
    HW,
    "Row remapping or page retirement waits for a GPU reset",
)
GPU104 = _code(
    "GPU104", "gpu-row-remap-failed", "fail", HW, "Row remapping failed: memory cannot be repaired"
)
GPU110 = _code("GPU110", "gpu-count-mismatch", "fail", HW, "Fewer or more GPUs than expected")
GPU112 = _code(
    "GPU112",
    "gpu-driver-unusable",
    "fail",
    "driver_env",
    "NVIDIA GPUs are on the PCI bus but NVML cannot use them",
)
GPU111 = _code(
    "GPU111", "gpu-mixed-models", "warn", "configuration", "Mixed GPU models or memory sizes on one node"
)
GPU130 = _code(
    "GPU130",
    "gpu-temperature-near-slowdown",
    "warn",
    "performance",
    "GPU temperature is close to its slowdown threshold",
)
GPU131 = _code(
    "GPU131",
    "gpu-clocks-throttled-hw",
    "warn",
    "performance",
    "Hardware slowdown, thermal or power-brake throttling is active",
)
GPU132 = _code("GPU132", "gpu-power-limit-lowered", "warn", "performance", "Power limit below the default")
GPU140 = _code("GPU140", "gpu-pcie-width-degraded", "warn", HW, "PCIe link narrower than it can be")
GPU142 = _code("GPU142", "gpu-pcie-replays", "warn", HW, "PCIe replay counter is high")
GPU150 = _code("GPU150", "gpu-nvlink-down", "fail", HW, "NVLink link down")
GPU151 = _code("GPU151", "gpu-nvlink-errors", "warn", HW, "NVLink error counters are not zero")
GPU160 = _code("GPU160", "gpu-persistence-mode-off", "warn", "configuration", "Persistence mode is off")
GPU161 = _code(
    "GPU161",
    "gpu-compute-mode-blocks-ranks",
    "fail",
    "configuration",
    "GPU compute mode prevents the local ranks from sharing it",
)
GPU162 = _code(
    "GPU162", "gpu-mig-enabled", "fail", "configuration", "MIG is enabled where full GPUs are expected"
)
GPU170 = _code("GPU170", "gpu-foreign-processes", "warn", "capacity", "Other processes hold GPU memory")
GPU171 = _code("GPU171", "gpu-free-memory-low", "warn", "capacity", "Little free GPU memory")
GPU180 = _code(
    "GPU180",
    "gpu-driver-too-old-for-torch",
    "fail",
    "driver_env",
    "torch's CUDA runtime is newer than the driver supports",
)

EXPECT_GPUS = config_key(
    "expect.gpus", int, -1, "GPUs this node must have (-1: not set; --expect-gpus overrides).", lo=-1
)
TEMP_MARGIN = config_key(
    "gpu.temp_margin_c",
    float,
    5.0,
    "Warn when a GPU is within this many degrees C of its slowdown temperature.",
)
NVLINK_ERR_MAX = config_key(
    "gpu.nvlink_error_max", int, 0, "Largest NVLink replay/recovery/CRC counter accepted per link."
)
PCIE_REPLAY_MAX = config_key(
    "gpu.pcie_replay_max", int, 100, "Largest PCIe replay counter accepted since the driver loaded."
)
ALLOW_MIG = config_key("gpu.allow_mig", bool, False, "Accept GPUs in MIG mode (inference/sharing nodes).")
MIN_FREE = config_key(
    "gpu.min_free_memory_fraction", float, 0.9, "Warn when free/total GPU memory is below this fraction."
)
FOREIGN_FAIL = config_key(
    "gpu.foreign_memory_fail_fraction",
    float,
    0.05,
    "Other processes holding this fraction of a GPU's memory make GPU170 a failure.",
)
XID_WINDOW = config_key(
    "gpu.xid_window_s", float, 86400.0, "How far back the kernel log is read for Xid events."
)


class Gpu:
    """One GPU's measurements, by key (link-scoped NVLink measurements kept apart)."""

    def __init__(self, index: int):
        self.index = index
        self.fields: dict[str, Measurement] = {}
        self.links: dict[str, dict[str, Measurement]] = defaultdict(dict)

    def m(self, key: str) -> Optional[Measurement]:
        return self.fields.get(key)

    def v(self, key: str) -> Any:
        """The value, or None when never measured or Unavailable."""
        m = self.fields.get(key)
        return None if m is None or isinstance(m.value, Unavailable) else m.value

    @property
    def scope(self) -> Scope:
        uuid = self.v("gpu.uuid")
        return Scope(gpu_index=self.index, gpu_uuid=uuid if isinstance(uuid, str) else None)

    @property
    def label(self) -> str:
        bus = self.v("gpu.pci_bus_id")
        return f"GPU {self.index}" + (f" ({bus})" if bus else "")

    def ev(self, *keys: str) -> list[Evidence]:
        return [e for k in keys for e in evidence_of(self.fields.get(k))]


def gpus(snap: Snapshot) -> list[Gpu]:
    by_index: dict[int, Gpu] = {}
    for m in snap.measurements():
        if not m.key.startswith("gpu.") or m.scope.gpu_index is None:
            continue
        g = by_index.setdefault(m.scope.gpu_index, Gpu(m.scope.gpu_index))
        if m.scope.link is not None:
            g.links[m.scope.link][m.key] = m
        else:
            g.fields[m.key] = m
    return [by_index[i] for i in sorted(by_index)]


def _num(value: Any) -> Optional[float]:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


@check(AREA, [GPU100], needs=["gpu"])
def lost(snap: Snapshot, config: Config) -> list[Finding]:
    return [
        GPU100.finding(
            f"{g.label} answers NVML with 'GPU is lost'",
            scope=g.scope,
            evidence=g.ev("gpu.lost", "gpu.uuid", "gpu.name"),
        )
        for g in gpus(snap)
        if g.v("gpu.lost") is True
    ]


def expected_gpus(snap: Snapshot, config: Config) -> tuple[Optional[int], bool, str]:
    """(count, exact, where it came from): the config/CLI is exact; the launch environment only
    says how many the ranks on this node need at least."""
    if config[EXPECT_GPUS.name] >= 0:
        return config[EXPECT_GPUS.name], True, "expect.gpus (config or --expect-gpus)"
    env = env_vars(snap)
    info = parse_launch(env)
    if info.local_world_size:
        return info.local_world_size, False, f"LOCAL_WORLD_SIZE={info.local_world_size} (local ranks)"
    slurm = env.get("SLURM_GPUS_ON_NODE", "").strip()
    if slurm.isdigit():
        return int(slurm), False, f"SLURM_GPUS_ON_NODE={slurm}"
    return None, False, ""


@check(AREA, [GPU110], needs=["gpu"])
def count(snap: Snapshot, config: Config) -> list[Finding]:
    m = snap.get("gpu.count")
    found = m.value if m is not None and isinstance(m.value, int) else None
    pci = snap.get("gpu.pci.count")
    if found is not None and pci is not None and isinstance(pci.value, int) and pci.value > found:
        # A GPU the kernel enumerated but NVML does not list: fell off the bus or failed to initialise.
        return [
            GPU110.finding(
                f"NVML sees {found} GPU(s); the PCI bus has {pci.value} NVIDIA GPU(s)",
                evidence=[*evidence_of(m), *evidence_of(pci), *evidence_of(snap.get("gpu.pci.bus_ids"))],
                facts={"found": found, "expected": pci.value, "source": "PCI bus"},
            )
        ]
    expected, exact, source = expected_gpus(snap, config)
    if expected is None or found is None:
        return []
    if found == expected or (not exact and found > expected):
        return []
    return [
        GPU110.finding(
            f"NVML sees {found} GPU(s); {source} expects {expected}",
            evidence=[*evidence_of(m), Evidence(f"expected {expected} from {source}")],
            facts={"found": found, "expected": expected, "source": source},
        )
    ]


@check(AREA, [GPU110], needs=["host"])
def expected_but_absent(snap: Snapshot, config: Config) -> list[Finding]:
    """An explicit expectation (--expect-gpus, expect.gpus) on a host where NVML sees nothing:
    `count` cannot judge without NVML, and a prolog asked for 4 GPUs must not pass on none."""
    p = snap.probe("gpu")
    expected, exact, source = expected_gpus(snap, config)
    if (p is not None and p.status is Status.PASSED) or not exact or not expected:
        return []
    # The PCI probe is unavailable on a host without NVIDIA devices; the host probe always counts.
    counts = [
        (m, m.value)
        for m in (snap.get("gpu.pci.count"), snap.get("host.nvidia.gpu_count"))
        if m is not None and isinstance(m.value, int)
    ]
    on_bus = max((n for _, n in counts), default=0)
    if on_bus >= expected:  # the GPUs are there; driver_unusable (GPU112) says why NVML is not
        return []
    nvml = f"; NVML is {p.status.value}: {p.reason}" if p is not None else ""
    return [
        GPU110.finding(
            f"{source} expects {expected} GPU(s); this host has {on_bus} NVIDIA GPU(s){nvml}",
            evidence=[e for m, _ in counts for e in evidence_of(m)]
            + [Evidence(f"expected {expected} from {source}")],
            facts={"found": on_bus, "expected": expected, "source": source},
        )
    ]


@check(AREA, [GPU112], needs=["gpu_pci"])
def driver_unusable(snap: Snapshot, config: Config) -> list[Finding]:
    p = snap.probe("gpu")
    if p is None or p.status not in (Status.UNAVAILABLE, Status.CRASHED):
        return []
    pci = snap.get("gpu.pci.count")
    return [
        GPU112.finding(
            f"{pci.value if pci else '?'} NVIDIA GPU(s) on the PCI bus, but NVML is {p.status.value}: "
            f"{p.reason}",
            evidence=[
                *evidence_of(pci),
                *evidence_of(snap.get("gpu.pci.bus_ids")),
                Evidence(f"probe gpu {p.status.value}: {p.reason}"),
            ],
            facts={"pci_gpus": pci.value if pci else None, "nvml": p.reason},
        )
    ]


@check(AREA, [GPU111], needs=["gpu"])
def mixed(snap: Snapshot, config: Config) -> list[Finding]:
    gs = gpus(snap)
    names = defaultdict(list)
    for g in gs:
        if g.v("gpu.name") is not None:
            names[g.v("gpu.name")].append(g.index)
    out = []
    if len(names) > 1:
        desc = "; ".join(f"{n}: GPUs {','.join(map(str, idx))}" for n, idx in sorted(names.items()))
        out.append(
            GPU111.finding(
                f"{len(names)} GPU models on one node ({desc})",
                evidence=[e for g in gs for e in g.ev("gpu.name")],
                facts={"models": {k: v for k, v in names.items()}},
            )
        )
        return out
    totals = {g.index: g.v("gpu.memory.total_bytes") for g in gs if _num(g.v("gpu.memory.total_bytes"))}
    if totals and min(totals.values()) < 0.99 * max(totals.values()):
        desc = ", ".join(f"GPU {i}: {fmt_bytes(t)}" for i, t in sorted(totals.items()))
        out.append(
            GPU111.finding(
                f"GPUs of one model report different memory sizes ({desc})",
                evidence=[e for g in gs for e in g.ev("gpu.memory.total_bytes")],
                facts={"memory_total_bytes": totals},
            )
        )
    return out


@check(AREA, [GPU101, GPU102], needs=["gpu"])
def ecc(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    for g in gpus(snap):
        vol = _num(g.v("gpu.ecc.volatile.uncorrected"))
        agg = _num(g.v("gpu.ecc.aggregate.uncorrected"))
        if vol:
            out.append(
                GPU101.finding(
                    f"{g.label}: {int(vol)} uncorrectable ECC error(s) since the driver loaded",
                    scope=g.scope,
                    evidence=g.ev("gpu.ecc.volatile.uncorrected", "gpu.remap.pending", "gpu.remap.failed"),
                    facts={"volatile_uncorrected": int(vol)},
                )
            )
        elif agg:
            out.append(
                GPU102.finding(
                    f"{g.label}: {int(agg)} uncorrectable ECC error(s) in its lifetime, "
                    "none since the driver loaded",
                    scope=g.scope,
                    evidence=g.ev(
                        "gpu.ecc.aggregate.uncorrected", "gpu.remap.uncorrectable", "gpu.retired_pages.dbe"
                    ),
                    facts={"aggregate_uncorrected": int(agg)},
                )
            )
    return out


@check(AREA, [GPU103, GPU104], needs=["gpu"])
def memory_repair(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    for g in gpus(snap):
        if g.v("gpu.remap.failed") is True:
            out.append(
                GPU104.finding(
                    f"{g.label}: row remapping failed",
                    scope=g.scope,
                    evidence=g.ev("gpu.remap.failed", "gpu.remap.uncorrectable", "gpu.remap.correctable"),
                )
            )
        pending = [k for k in ("gpu.remap.pending", "gpu.retired_pages.pending") if g.v(k) is True]
        if pending:
            what = " and ".join("row remapping" if "remap" in k else "page retirement" for k in pending)
            out.append(
                GPU103.finding(
                    f"{g.label}: {what} pending until the GPU is reset",
                    scope=g.scope,
                    evidence=g.ev(*pending),
                )
            )
    return out


@check(AREA, [GPU130, GPU131, GPU132], needs=["gpu"])
def thermal_power(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    margin = config[TEMP_MARGIN.name]
    for g in gpus(snap):
        temp, slow = _num(g.v("gpu.temp_c")), _num(g.v("gpu.temp_slowdown_c"))
        if temp is not None and slow is not None and temp >= slow - margin:
            out.append(
                GPU130.finding(
                    f"{g.label} is at {temp:.0f} C, slowdown at {slow:.0f} C",
                    scope=g.scope,
                    evidence=g.ev("gpu.temp_c", "gpu.temp_slowdown_c"),
                    facts={"temp_c": temp, "slowdown_c": slow},
                )
            )
        active = [
            n for n in ("hw_slowdown", "hw_thermal", "hw_power_brake") if g.v(f"gpu.throttle.{n}") is True
        ]
        if active:
            out.append(
                GPU131.finding(
                    f"{g.label}: clocks held down by {', '.join(active)}",
                    scope=g.scope,
                    evidence=g.ev(
                        *(f"gpu.throttle.{n}" for n in active),
                        "gpu.clocks.sm_mhz",
                        "gpu.clocks.sm_max_mhz",
                        "gpu.temp_c",
                        "gpu.power.draw_w",
                    ),
                    facts={"reasons": active},
                )
            )
        limits = [x for x in (_num(g.v("gpu.power.limit_w")), _num(g.v("gpu.power.enforced_limit_w"))) if x]
        default = _num(g.v("gpu.power.default_limit_w"))
        # NVML reports milliwatts; a watt of slack absorbs rounding between the two limits.
        if limits and default and min(limits) < default - 1.0:
            out.append(
                GPU132.finding(
                    f"{g.label}: power limit {min(limits):.0f} W, default {default:.0f} W",
                    scope=g.scope,
                    evidence=g.ev(
                        "gpu.power.limit_w", "gpu.power.enforced_limit_w", "gpu.power.default_limit_w"
                    ),
                    facts={"limit_w": min(limits), "default_w": default},
                )
            )
    return out


@check(AREA, [GPU140, GPU142], needs=["gpu"])
def pcie(snap: Snapshot, config: Config) -> list[Finding]:
    out = []
    for g in gpus(snap):
        width, width_max = _num(g.v("gpu.pcie.link_width")), _num(g.v("gpu.pcie.link_width_max"))
        # Only the width: the generation drops at idle by design and is judged under load (GPU141).
        if width is not None and width_max is not None and width < width_max:
            out.append(
                GPU140.finding(
                    f"{g.label}: PCIe link x{width:.0f}, capable of x{width_max:.0f}",
                    scope=g.scope,
                    evidence=g.ev("gpu.pcie.link_width", "gpu.pcie.link_width_max"),
                    facts={"width": width, "width_max": width_max},
                )
            )
        replays = _num(g.v("gpu.pcie.replay_counter"))
        if replays is not None and replays > config[PCIE_REPLAY_MAX.name]:
            out.append(
                GPU142.finding(
                    f"{g.label}: {replays:.0f} PCIe replays since the driver loaded",
                    scope=g.scope,
                    evidence=g.ev("gpu.pcie.replay_counter"),
                    facts={"replays": replays},
                )
            )
    return out


@check(AREA, [GPU150, GPU151], needs=["gpu"])
def nvlink(snap: Snapshot, config: Config) -> list[Finding]:
    gs = gpus(snap)
    out = []
    # A node where no link is up does not use NVLink (PCIe cards without bridges): not a failure.
    any_up = any(
        lm.get("gpu.nvlink.active") and lm["gpu.nvlink.active"].value is True
        for g in gs
        for lm in g.links.values()
    )
    limit = config[NVLINK_ERR_MAX.name]
    for g in gs:
        down = sorted(
            (
                k
                for k, lm in g.links.items()
                if lm.get("gpu.nvlink.active") is not None and lm["gpu.nvlink.active"].value is False
            ),
            key=int,
        )
        if down and any_up:
            up = len(g.links) - len(down)
            out.append(
                GPU150.finding(
                    f"{g.label}: NVLink link(s) {','.join(down)} down ({up} of {len(g.links)} up)",
                    scope=g.scope,
                    evidence=[e for k in down for e in evidence_of(g.links[k]["gpu.nvlink.active"])],
                    facts={"links_down": [int(k) for k in down], "links_total": len(g.links)},
                )
            )
        bad: dict[str, dict[str, int]] = {}
        ev: list[Evidence] = []
        for link, lm in sorted(g.links.items(), key=lambda kv: int(kv[0])):
            for key, m in lm.items():
                if key.startswith("gpu.nvlink.errors.") and _num(m.value) is not None and m.value > limit:  # type: ignore[operator]
                    bad.setdefault(link, {})[key.rsplit(".", 1)[1]] = int(m.value)  # type: ignore[arg-type]
                    ev += [Evidence(f"link {link}: {key} = {m.value} ({m.source})", key=key)]
        if bad:
            desc = "; ".join(
                f"link {k}: " + ", ".join(f"{n}={v}" for n, v in c.items()) for k, c in bad.items()
            )
            out.append(
                GPU151.finding(
                    f"{g.label}: NVLink errors ({desc})", scope=g.scope, evidence=ev, facts={"links": bad}
                )
            )
    return out


def _local_ranks(snap: Snapshot) -> Optional[int]:
    return parse_launch(env_vars(snap)).local_world_size


@check(AREA, [GPU160, GPU161, GPU162], needs=["gpu"])
def modes(snap: Snapshot, config: Config) -> list[Finding]:
    gs = gpus(snap)
    out = []
    off = [g for g in gs if g.v("gpu.persistence_mode") is False]
    if off:
        out.append(
            GPU160.finding(
                f"persistence mode off on GPU(s) {','.join(str(g.index) for g in off)}",
                evidence=[e for g in off for e in g.ev("gpu.persistence_mode")],
                facts={"gpus": [g.index for g in off]},
            )
        )
    ranks = _local_ranks(snap)
    for g in gs:
        mode = g.v("gpu.compute_mode")
        if mode == "prohibited":
            out.append(
                GPU161.finding(
                    f"{g.label}: compute mode is prohibited, no process can use it",
                    scope=g.scope,
                    evidence=g.ev("gpu.compute_mode"),
                    facts={"compute_mode": mode},
                )
            )
        elif mode in ("exclusive_process", "exclusive_thread") and ranks and ranks > len(gs):
            out.append(
                GPU161.finding(
                    f"{g.label}: compute mode {mode} but {ranks} local ranks share {len(gs)} GPU(s)",
                    scope=g.scope,
                    evidence=[
                        *g.ev("gpu.compute_mode"),
                        Evidence(f"LOCAL_WORLD_SIZE={ranks}", key="env.vars"),
                    ],
                    facts={"compute_mode": mode, "local_ranks": ranks, "gpus": len(gs)},
                )
            )
        if not config[ALLOW_MIG.name] and (
            g.v("gpu.mig.mode_current") is True or g.v("gpu.mig.mode_pending") is True
        ):
            state = "enabled" if g.v("gpu.mig.mode_current") is True else "pending (enabled at next reset)"
            out.append(
                GPU162.finding(
                    f"{g.label}: MIG mode {state}",
                    scope=g.scope,
                    evidence=g.ev("gpu.mig.mode_current", "gpu.mig.mode_pending"),
                )
            )
    return out


def _foreign(g: Gpu, own: Iterable[int]) -> list[dict[str, Any]]:
    procs = g.v("gpu.processes")
    mine = set(own)
    return (
        [p for p in procs if isinstance(p, dict) and p.get("pid") not in mine]
        if isinstance(procs, list)
        else []
    )


@check(AREA, [GPU170, GPU171], needs=["gpu"])
def memory(snap: Snapshot, config: Config) -> list[Finding]:
    own = snap.value("gpu.own_pids", [])
    out = []
    for g in gpus(snap):
        total = _num(g.v("gpu.memory.total_bytes"))
        foreign = _foreign(g, own if isinstance(own, list) else [])
        if foreign:
            held = sum(p.get("used_bytes") or 0 for p in foreign)
            desc = ", ".join(
                f"pid {p['pid']} {p.get('name') or '?'} "
                f"{fmt_bytes(p['used_bytes']) if p.get('used_bytes') is not None else '(size unknown)'}"
                for p in foreign
            )
            heavy = total is not None and held >= config[FOREIGN_FAIL.name] * total
            out.append(
                GPU170.finding(
                    f"{g.label}: {len(foreign)} other process(es) hold {fmt_bytes(held)}: {desc}",
                    scope=g.scope,
                    evidence=g.ev("gpu.processes", "gpu.memory.used_bytes"),
                    facts={"processes": foreign, "held_bytes": held},
                    severity=Severity.FAIL if heavy else None,
                )
            )
            continue  # the processes explain the memory; GPU171 would say the same thing again
        free = _num(g.v("gpu.memory.free_bytes"))
        if total and free is not None and free / total < config[MIN_FREE.name]:
            out.append(
                GPU171.finding(
                    f"{g.label}: {fmt_bytes(free)} free of {fmt_bytes(total)} ({100 * free / total:.0f}%) "
                    "and no process listed by NVML holds it",
                    scope=g.scope,
                    evidence=g.ev("gpu.memory.free_bytes", "gpu.memory.total_bytes", "gpu.processes"),
                    facts={"free_bytes": free, "total_bytes": total},
                )
            )
    return out


def _version(text: Any) -> Optional[tuple[int, int]]:
    if not isinstance(text, str):
        return None
    parts = text.split(".")
    try:
        return int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    except ValueError:
        return None


@check(AREA, [GPU180], needs=["gpu", "software"])
def driver_vs_torch(snap: Snapshot, config: Config) -> list[Finding]:
    torch_m, driver_m = snap.get("software.torch.cuda_runtime"), snap.get("gpu.cuda_driver_version")
    if torch_m is None or driver_m is None:
        return []
    torch_v, driver_v = _version(torch_m.value), _version(driver_m.value)
    if torch_v is None or driver_v is None or torch_v <= driver_v:
        return []
    ev = evidence_of(torch_m) + evidence_of(driver_m) + evidence_of(snap.get("gpu.driver_version"))
    facts = {"torch_cuda": torch_m.value, "driver_cuda": driver_m.value}
    if torch_v[0] > driver_v[0]:
        return [
            GPU180.finding(
                f"torch was built for CUDA {torch_m.value}; the driver supports up to "
                f"CUDA {driver_m.value}: CUDA initialisation will fail",
                evidence=ev,
                facts=facts,
            )
        ]
    # Same major version: CUDA minor-version compatibility runs it, but PTX JIT and new APIs fail.
    return [
        GPU180.finding(
            f"torch was built for CUDA {torch_m.value}; the driver supports CUDA {driver_m.value} "
            "(runs through minor-version compatibility; PTX JIT and newer features fail)",
            evidence=ev,
            facts=facts,
            severity=Severity.WARN,
        )
    ]

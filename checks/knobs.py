"""NCCL, gloo and torch environment knobs that commonly break, slow or blind a job."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pgdoctor.checks.base import Config, check, evidence_of, register_code
from pgdoctor.checks.software import gpu_count, version_tuple
from pgdoctor.knowledge.torch_env import torch_import_problem
from pgdoctor.model import Evidence, Finding, Snapshot

ENV401 = register_code(
    "ENV401",
    "socket-ifname-no-match",
    "fail",
    "nccl_network",
    "Socket interface setting matches no interface",
    "knobs",
)
ENV402 = register_code(
    "ENV402",
    "socket-ifname-down",
    "fail",
    "nccl_network",
    "Socket interface setting selects only interfaces that are down",
    "knobs",
)
ENV403 = register_code(
    "ENV403", "nccl-transport-disabled", "warn", "performance", "An NCCL transport is disabled", "knobs"
)
ENV404 = register_code(
    "ENV404", "nccl-debug-unset", "info", "configuration", "NCCL_DEBUG is not set", "knobs"
)
ENV405 = register_code(
    "ENV405",
    "nccl-hang-detection-off",
    "warn",
    "configuration",
    "NCCL errors and timeouts are not acted on",
    "knobs",
)
ENV406 = register_code(
    "ENV406",
    "torch-nccl-knob-invalid",
    "fail",
    "configuration",
    "NCCL/torch knob with an invalid value",
    "knobs",
)
ENV407 = register_code(
    "ENV407", "flight-recorder-off", "info", "configuration", "The flight recorder is off", "knobs"
)
ENV408 = register_code(
    "ENV408", "nccl-blocking-wait-enabled", "info", "performance", "TORCH_NCCL_BLOCKING_WAIT is on", "knobs"
)

TORCH_BOOLEAN_KNOBS = (
    "TORCH_NCCL_BLOCKING_WAIT",
    "NCCL_BLOCKING_WAIT",
    "TORCH_NCCL_DUMP_ON_TIMEOUT",
    "TORCH_NCCL_ENABLE_MONITORING",
)
NCCL_DEBUG_LEVELS = ("VERSION", "WARN", "INFO", "TRACE", "ABORT")
# What torch's getCvarBool accepts (case-insensitive); NCCL's own *_DISABLE knobs read 0/1 only,
# but "true" there is parsed as 0 by atoi, which is exactly the surprise worth flagging.
TORCH_TRUE = ("1", "y", "yes", "t", "true")
TORCH_FALSE = ("0", "n", "no", "f", "false")
NCCL_BOOLEAN_KNOBS = ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE")
# torch 2.6 turned the flight recorder on by default (2000 entries) for NCCL process groups.
FR_DEFAULT_ON_SINCE = (2, 6)


def select_nccl(spec: str, names: list[str]) -> list[str]:
    """Interfaces NCCL_SOCKET_IFNAME selects: prefixes, `^` to exclude, `=` for exact names."""
    exclude = spec.startswith("^")
    body = spec[1:] if exclude else spec
    exact = body.startswith("=")
    body = body[1:] if exact else body
    items = [i.strip() for i in body.split(",") if i.strip()]

    def hit(name: str) -> bool:
        return any(name == i if exact else name.startswith(i) for i in items)

    return [n for n in names if hit(n) != exclude]


def _iface_findings(
    var: str,
    spec: str,
    selected: list[str],
    missing: list[str],
    ifaces: Mapping[str, Any],
    ev: list[Evidence],
) -> list[Finding]:
    facts = {"variable": var, "value": spec, "interfaces": sorted(ifaces)}
    if not selected or missing:
        have = ", ".join(sorted(ifaces)) or "none"
        message = (
            f"{var}={spec} names {', '.join(missing)}, which this host does not have (it has {have})"
            if missing
            else f"{var}={spec} selects none of this host's interfaces (it has {have})"
        )
        return [ENV401.finding(message, evidence=ev, facts=facts)]
    if not any(ifaces[n].get("up") for n in selected):
        states = ", ".join(f"{n} {ifaces[n].get('operstate')}" for n in selected)
        return [
            ENV402.finding(
                f"{var}={spec} selects only interfaces that are down ({states})",
                evidence=ev,
                facts=facts | {"selected": selected},
            )
        ]
    return []


@check("knobs", [ENV401, ENV402], needs=["environment", "netifs"])
def socket_ifname(snap: Snapshot, config: Config) -> list[Finding]:
    env = snap.value("env.vars", {}) or {}
    m = snap.get("net.interfaces")
    ifaces: dict[str, Any] = dict(m.value) if m is not None and isinstance(m.value, dict) else {}
    out = []
    spec = env.get("NCCL_SOCKET_IFNAME", "").strip()
    if spec:
        ev = [Evidence(f"NCCL_SOCKET_IFNAME={spec}", key="env.vars"), *evidence_of(m)]
        out += _iface_findings("NCCL_SOCKET_IFNAME", spec, select_nccl(spec, sorted(ifaces)), [], ifaces, ev)
    gloo = env.get("GLOO_SOCKET_IFNAME", "").strip()
    if gloo:
        names = [n.strip() for n in gloo.split(",") if n.strip()]
        ev = [Evidence(f"GLOO_SOCKET_IFNAME={gloo}", key="env.vars"), *evidence_of(m)]
        missing = [n for n in names if n not in ifaces]
        out += _iface_findings(
            "GLOO_SOCKET_IFNAME", gloo, [n for n in names if n in ifaces], missing, ifaces, ev
        )
    return out


@check("knobs", [ENV403, ENV404, ENV405, ENV406, ENV407, ENV408], needs=["environment", "software", "host"])
def nccl_knobs(snap: Snapshot, config: Config) -> list[Finding]:
    env: dict[str, str] = snap.value("env.vars", {}) or {}

    def ev(*names: str) -> list[Evidence]:
        return [Evidence(f"{n}={env[n]}", key="env.vars") for n in names if n in env]

    out = []
    invalid = []
    for name in TORCH_BOOLEAN_KNOBS:
        if name in env and env[name].strip().lower() not in TORCH_TRUE + TORCH_FALSE:
            invalid.append(name)
    for name in NCCL_BOOLEAN_KNOBS:
        if name in env and env[name].strip() not in ("0", "1"):
            invalid.append(name)
    for name in ("TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"):
        if name in env and env[name].strip() not in ("0", "1", "2", "3"):
            invalid.append(name)
    for name in ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE"):
        if name in env and not (env[name].strip().isdigit()):
            invalid.append(name)
    if "NCCL_DEBUG" in env and env["NCCL_DEBUG"].strip().upper() not in NCCL_DEBUG_LEVELS:
        invalid.append("NCCL_DEBUG")
    if torch_import_problem(env):  # judged at --level quick too, where torch is never imported
        invalid.append("TORCH_DISTRIBUTED_DEBUG")
    for name in invalid:
        out.append(
            ENV406.finding(
                f"{name}={env[name]!r} is not a value it accepts",
                evidence=ev(name),
                facts={"variable": name, "value": env[name]},
            )
        )

    disabled = [
        n
        for n in ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE", "NCCL_SHM_DISABLE")
        if env.get(n, "").strip() == "1"
    ]
    if env.get("NCCL_NET", "").strip().lower() == "socket":
        disabled.append("NCCL_NET")
    if disabled:
        out.append(
            ENV403.finding(
                f"{', '.join(disabled)} set: NCCL will use slower paths",
                evidence=ev(*disabled),
                facts={"variables": disabled},
            )
        )
    # Only a GPU host runs NCCL; on a login or CPU node the unset variable is not a finding.
    if not env.get("NCCL_DEBUG", "").strip() and gpu_count(snap) > 0:
        out.append(
            ENV404.finding("NCCL_DEBUG is unset: a failure will not log NCCL's transport choices or errors")
        )

    handling = env.get("TORCH_NCCL_ASYNC_ERROR_HANDLING", env.get("NCCL_ASYNC_ERROR_HANDLING", "")).strip()
    blocking_raw = env.get("TORCH_NCCL_BLOCKING_WAIT", env.get("NCCL_BLOCKING_WAIT", "")).strip().lower()
    blocking = "1" if blocking_raw in TORCH_TRUE else "0" if blocking_raw in TORCH_FALSE else blocking_raw
    if handling == "0" and blocking != "1":
        out.append(
            ENV405.finding(
                "async error handling is 0 and blocking wait is off: a stuck collective hangs forever",
                evidence=ev(
                    "TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_BLOCKING_WAIT"
                ),
            )
        )
    if blocking == "1":
        out.append(
            ENV408.finding(
                "blocking wait is on: every collective is waited on by the calling thread",
                evidence=ev("TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT"),
            )
        )
    off = flight_recorder_off(env, snap.value("software.torch.version"))
    if off:
        out.append(
            ENV407.finding(
                f"{off}: a hang would leave no flight-recorder dump",
                evidence=ev("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE")
                + evidence_of(snap.get("software.torch.version")),
            )
        )
    return out


def flight_recorder_off(env: Mapping[str, str], torch_version: str | None) -> str:
    """Why the flight recorder is off, or "" when it is on. TORCH_FR_BUFFER_SIZE wins over the
    older TORCH_NCCL_TRACE_BUFFER_SIZE; unset means torch's default, which is on since 2.6."""
    for name in ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE"):
        raw = env.get(name, "").strip()
        if raw.isdigit():
            return f"{name}={raw}" if int(raw) == 0 else ""
    if torch_version is None:
        return ""  # unknown torch: do not guess
    if version_tuple(torch_version) >= FR_DEFAULT_ON_SINCE:
        return ""
    return f"TORCH_FR_BUFFER_SIZE is unset and torch {torch_version} records nothing by default"

"""Registration of finding codes, config keys and check functions.

A check is a pure function `(snapshot, config) -> list[Finding]`. It reads measurements, never
the system: modules in this package must not import os, subprocess, torch, pynvml or
pgdoctor.probes (tests/architecture/test_architecture.py enforces it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from pgdoctor.knowledge.readable import readable
from pgdoctor.model import HOST, Evidence, Finding, Measurement, Scope, Severity, Snapshot, Unavailable

CODE_RE = re.compile(r"^[A-Z]{2,4}\d{3}$")
SLUG_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Code:
    """A public finding code. Never reused: a retired code goes to RETIRED_CODES."""

    code: str
    slug: str
    severity: Severity
    category: str
    title: str
    area: str

    def finding(
        self,
        message: str,
        *,
        scope: Scope = HOST,
        evidence: Sequence[Evidence] = (),
        facts: Optional[Mapping[str, Any]] = None,
        severity: Optional[Severity] = None,
    ) -> Finding:
        return Finding(
            code=self.code,
            slug=self.slug,
            severity=severity or self.severity,
            category=self.category,
            title=self.title,
            message=message,
            area=self.area,
            scope=scope,
            evidence=tuple(evidence),
            facts=dict(facts or {}),
        )


CODES: dict[str, Code] = {}
# Codes that were published once and must never be given a new meaning.
RETIRED_CODES: frozenset[str] = frozenset()


def register_code(code: str, slug: str, severity: str, category: str, title: str, area: str) -> Code:
    if not CODE_RE.match(code) or not SLUG_RE.match(slug):
        raise ValueError(f"bad code or slug: {code} {slug}")
    if code in CODES or any(c.slug == slug for c in CODES.values()):
        raise ValueError(f"code or slug registered twice: {code} {slug}")
    if code in RETIRED_CODES:
        raise ValueError(f"code {code} is retired and cannot be reused")
    c = Code(code, slug, Severity(severity), category, title, area)
    CODES[code] = c
    return c


@dataclass(frozen=True)
class ConfigKey:
    """One key of the TOML config: `section.name`, its type, default and meaning."""

    name: str
    type: type
    default: Any
    doc: str
    # A number the config gives must be finite and inside [lo, hi]: thresholds are never
    # negative unless a key says so, and a percentage is at most 100.
    lo: Optional[float] = 0.0
    hi: Optional[float] = None


CONFIG_KEYS: dict[str, ConfigKey] = {}


def config_key(
    name: str, type_: type, default: Any, doc: str, lo: Optional[float] = 0.0, hi: Optional[float] = None
) -> ConfigKey:
    if name in CONFIG_KEYS:
        raise ValueError(f"config key registered twice: {name}")
    k = ConfigKey(name, type_, default, doc, lo, hi)
    CONFIG_KEYS[name] = k
    return k


class Config(Mapping[str, Any]):
    """Validated configuration: every declared key with the user's value or its default."""

    def __init__(self, values: Optional[Mapping[str, Any]] = None):
        self._values = {k.name: k.default for k in CONFIG_KEYS.values()}
        self._values.update(values or {})

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            raise KeyError(f"config key {key!r} was never declared with config_key()")
        return self._values[key]

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)


CheckFn = Callable[[Snapshot, Config], list[Finding]]


@dataclass(frozen=True)
class CheckSpec:
    name: str
    area: str
    fn: CheckFn
    codes: tuple[str, ...]
    needs: tuple[str, ...]  # probe names whose results the check reads


CHECKS: dict[str, CheckSpec] = {}


def check(area: str, codes: Sequence[Code], needs: Sequence[str]) -> Callable[[CheckFn], CheckFn]:
    """Register a check function. `needs` names the probes it reads, so the runner can mark it
    skipped (probe not run) or unavailable (probe unavailable) instead of passing it silently."""

    def deco(fn: CheckFn) -> CheckFn:
        # Check names are published (JSON results, --only/--skip); a module in a subpackage keeps
        # its name by setting CHECK_GROUP, so moving a file never renames its checks.
        group = fn.__globals__.get("CHECK_GROUP") or fn.__module__.rsplit(".", 1)[-1]
        name = f"{group}.{fn.__name__}"
        if name in CHECKS:
            raise ValueError(f"check registered twice: {name}")
        CHECKS[name] = CheckSpec(name, area, fn, tuple(c.code for c in codes), tuple(needs))
        return fn

    return deco


def evidence_of(m: Optional[Measurement]) -> list[Evidence]:
    """The evidence line for a measurement: `key = value unit (source)`."""
    if m is None:
        return []
    # structured values read as words (eth0 (operstate up, mtu 1400)), never as a Python repr
    value = str(m.value) if isinstance(m.value, Unavailable) else readable(m.value, 400)
    unit = f" {m.unit}" if m.unit else ""
    src = f" ({m.source})" if m.source else ""
    return [Evidence(f"{m.key} = {value}{unit}{src}", key=m.key)]

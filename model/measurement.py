"""Measurements and probe results: what a probe saw, or why it could not see it."""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional, Union

from pgdoctor.model import numbers

# Bump when the meaning or shape of the snapshot or of --json output changes.
SCHEMA_VERSION = 1

JsonValue = Union[None, bool, int, float, str, list[Any], dict[str, Any]]


class Severity(str, enum.Enum):
    INFO = "info"
    WARN = "warn"
    FAIL = "fail"

    @property
    def rank(self) -> int:
        return {"info": 0, "warn": 1, "fail": 2}[self.value]


class Status(str, enum.Enum):
    """Outcome of one probe or one check."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    UNAVAILABLE = "unavailable"
    CRASHED = "crashed"


class Reason(str, enum.Enum):
    """Why a measurement or a probe has no value. Closed set: renderers and checks switch on it."""

    NOT_SUPPORTED = "not_supported"
    NO_PERMISSION = "no_permission"
    GPU_LOST = "gpu_lost"
    LIBRARY_NOT_FOUND = "library_not_found"
    DRIVER_NOT_LOADED = "driver_not_loaded"
    FUNCTION_NOT_FOUND = "function_not_found"
    NOT_PRESENT = "not_present"
    NOT_REQUESTED = "not_requested"
    TIMEOUT = "timeout"
    INTERRUPTED = "interrupted"
    ERROR = "error"


@dataclass(frozen=True)
class Unavailable:
    """A value that could not be measured, with the reason; never a silent 0, False or N/A."""

    reason: Reason
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"unavailable": self.reason.value, "detail": self.detail}

    def __str__(self) -> str:
        return f"unavailable ({self.reason.value}{': ' + self.detail if self.detail else ''})"


@dataclass(frozen=True)
class Scope:
    """Where a measurement or a finding applies. All fields optional; empty means the host."""

    host: Optional[str] = None
    rank: Optional[int] = None
    gpu_index: Optional[int] = None
    gpu_uuid: Optional[str] = None
    link: Optional[str] = None
    nic: Optional[str] = None
    file: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Scope:
        if not data:  # most measurements are of the host: one shared instance
            return HOST
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def label(self) -> str:
        parts = [f"{k}={v}" for k, v in self.to_json().items()]
        return ",".join(parts)


HOST = Scope()


def _json_value(value: JsonValue | Unavailable) -> Any:
    if isinstance(value, Unavailable):
        return value.to_json()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _value_from_json(data: Any) -> JsonValue | Unavailable:
    if isinstance(data, dict) and set(data) == {"unavailable", "detail"}:
        return Unavailable(Reason(data["unavailable"]), data["detail"])
    return data  # type: ignore[no-any-return]


@dataclass(frozen=True)
class Measurement:
    """One measured fact: a stable dotted key, a value (or Unavailable), unit, scope and source."""

    key: str
    value: JsonValue | Unavailable
    unit: str = ""
    scope: Scope = HOST
    source: str = ""

    @property
    def ok(self) -> bool:
        return not isinstance(self.value, Unavailable)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "value": _json_value(self.value)}
        if self.unit:
            out["unit"] = self.unit
        if self.scope != HOST:
            out["scope"] = self.scope.to_json()
        if self.source:
            out["source"] = self.source
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Measurement:
        return cls(
            key=data["key"],
            value=_value_from_json(data.get("value")),
            unit=data.get("unit", ""),
            scope=Scope.from_json(data.get("scope", {})),
            source=data.get("source", ""),
        )


def result_json(result: Any) -> dict[str, Any]:
    """The fields a probe result and a check result share, as JSON."""
    return {
        "name": result.name,
        "area": result.area,
        "status": result.status.value,
        "reason": result.reason,
        "duration_s": round(result.duration_s, 6),
    }


@dataclass(frozen=True)
class ProbeResult:
    """What one probe returned, or why it returned nothing."""

    name: str
    area: str
    status: Status
    reason: str = ""
    duration_s: float = 0.0
    measurements: tuple[Measurement, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {**result_json(self), "measurements": [m.to_json() for m in self.measurements]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ProbeResult:
        return cls(
            name=data["name"],
            area=data["area"],
            status=Status(data["status"]),
            reason=data.get("reason", ""),
            duration_s=float(numbers.number(data.get("duration_s", 0.0), "duration_s", lo=0, hi=7 * 86400)),
            measurements=tuple(Measurement.from_json(m) for m in data.get("measurements", [])),
        )

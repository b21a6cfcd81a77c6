"""The snapshot: every probe result of one run, versioned JSON that round-trips (`collect`,
`check --from`, the test fixtures)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

from pgdoctor.model import jsontext, numbers
from pgdoctor.model.measurement import SCHEMA_VERSION, Measurement, ProbeResult, Scope, Unavailable
from pgdoctor.model.redact import scrub


def _mark_scrubbed(snap: Snapshot) -> Snapshot:
    object.__setattr__(snap, "scrubbed", True)
    return snap


class SnapshotFormatError(ValueError):
    """A snapshot file that is not one pgdoctor can read."""


def _text(data: dict[str, Any], key: str, default: Optional[str] = None) -> str:
    """A text field of a snapshot; a number or an object there is a malformed snapshot (str() of
    {"x": 1} was printed as the host's name)."""
    value = data[key] if default is None else data.get(key, default)
    if not isinstance(value, str):
        raise SnapshotFormatError(f"malformed snapshot: {key} is {type(value).__name__}, not text")
    return value


@dataclass(frozen=True)
class Snapshot:
    """Everything the probes saw on one host at one time. Input of every check."""

    host: str
    time_unix: float
    pgdoctor_version: str
    level: str
    probes: tuple[ProbeResult, ...]
    schema_version: int = SCHEMA_VERSION
    # True once every string in it went through scrub(): a report need not redact it again
    # (a 66 MB snapshot paid for three passes and a rebuild).
    # Not an init field: dataclasses.replace() (a probe added to a scrubbed snapshot) starts
    # over as not scrubbed.
    scrubbed: bool = field(default=False, init=False, compare=False, repr=False)

    def redacted(self) -> Snapshot:
        """This snapshot with every secret and control character neutralised."""
        return self if self.scrubbed else _mark_scrubbed(Snapshot.from_json(self.to_json()))

    def measurements(self) -> Iterator[Measurement]:
        for p in self.probes:
            yield from p.measurements

    def probe(self, name: str) -> Optional[ProbeResult]:
        for p in self.probes:
            if p.name == name:
                return p
        return None

    def get(self, key: str, scope: Optional[Scope] = None) -> Optional[Measurement]:
        """The measurement with this key (and scope, when given); None when never measured."""
        for m in self.measurements():
            if m.key == key and (scope is None or m.scope == scope):
                return m
        return None

    def value(self, key: str, default: Any = None) -> Any:
        """The value of a host-scope key, or `default` when missing or unavailable."""
        m = self.get(key)
        if m is None or isinstance(m.value, Unavailable):
            return default
        return m.value

    def all(self, key: str) -> list[Measurement]:
        return [m for m in self.measurements() if m.key == key]

    def with_prefix(self, prefix: str) -> list[Measurement]:
        return [m for m in self.measurements() if m.key.startswith(prefix)]

    def to_json(self) -> dict[str, Any]:
        return scrub(
            {
                "schema_version": self.schema_version,
                "kind": "pgdoctor.snapshot",
                "pgdoctor_version": self.pgdoctor_version,
                "host": self.host,
                "time_unix": self.time_unix,
                "level": self.level,
                "probes": [p.to_json() for p in self.probes],
            }
        )

    def dumps(self) -> str:
        return numbers.dumps(self.to_json(), indent=1, sort_keys=False)

    @classmethod
    def from_json(cls, data: Any) -> Snapshot:
        if not isinstance(data, dict) or data.get("kind") != "pgdoctor.snapshot":
            raise SnapshotFormatError('not a pgdoctor snapshot (no "kind": "pgdoctor.snapshot")')
        version = data.get("schema_version")
        if version != SCHEMA_VERSION:
            raise SnapshotFormatError(
                f"snapshot schema_version {version!r} is not supported (this pgdoctor reads {SCHEMA_VERSION})"
            )
        try:
            return cls(
                host=_text(data, "host"),
                time_unix=float(
                    numbers.number(data["time_unix"], "time_unix", lo=0, hi=numbers.MAX_TIME_UNIX)
                ),
                pgdoctor_version=_text(data, "pgdoctor_version"),
                level=_text(data, "level", "standard"),
                probes=tuple(ProbeResult.from_json(p) for p in data["probes"]),
                schema_version=version,
            )
        except SnapshotFormatError:
            raise
        except numbers.NumberError as exc:
            raise SnapshotFormatError(f"malformed snapshot: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise SnapshotFormatError(f"malformed snapshot: {type(exc).__name__}: {exc}") from None

    @classmethod
    def loads(cls, text: str) -> Snapshot:
        try:
            data = jsontext.loads(text)
        except jsontext.JsonInputError as exc:
            raise SnapshotFormatError(f"snapshot is not JSON: {exc}") from None
        return _mark_scrubbed(cls.from_json(scrub(data)))

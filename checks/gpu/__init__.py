"""Rules over GPU measurements: health, compute load, Xid events."""

from __future__ import annotations

from pgdoctor.checks.gpu import compute, health, xid  # noqa: F401  (register the checks)

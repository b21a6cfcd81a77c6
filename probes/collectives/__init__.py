"""The collective sweep: the probe, the launcher of local ranks and the worker each rank runs."""

from __future__ import annotations

from pgdoctor.probes.collectives import probe  # noqa: F401  (registers the probe)

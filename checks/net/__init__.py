"""Rules over the interconnect: links and NICs of a node, and consistency across nodes."""

from __future__ import annotations

from pgdoctor.checks.net import cluster, links  # noqa: F401  (register the checks)

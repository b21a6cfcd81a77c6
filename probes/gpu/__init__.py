"""GPU health through NVML (one backend, one error choke point), PCI, compute load and Xid events."""

from __future__ import annotations

from pgdoctor.probes.gpu import compute, health, pci, xid  # noqa: F401  (register the probes)

"""How a lab rank fails: out of memory, a delayed collective, or more work than the others.

One `Fault` object per rank; the strategies ask it for the batch size of a step, the work
factor of a rank, and call `before_collective` where a collective is about to start. Only the
faulty rank (spec.bad_rank) misbehaves.

oom: every rank grows the batch each step (the strategies need equal shapes across ranks);
the faulty rank alone runs under a memory cap, so it is the one that fails, through the real
allocator: on CPU an address-space limit (RLIMIT_AS) set in the rank's own process, so malloc
fails and PyTorch's DefaultCPUAllocator raises; on a GPU a per-process memory fraction, so
the CUDA caching allocator raises torch.OutOfMemoryError.
timeout: at `fault_step` the faulty rank sleeps before its next collective for much longer
than the process-group timeout, so its peers' collective times out.
imbalance: the faulty rank's work (ddp: batch, pp: layers, tp: shard width) is `factor` times
the others'.
"""

from __future__ import annotations

import resource
import time
from typing import Any

from pgdoctor.lab.spec import LabSpec

OOM_GROWTH = 2  # batch multiplier per step under the oom fault


def proc_status() -> dict[str, int]:
    """Vm* and Rss* lines of /proc/self/status, in bytes."""
    out: dict[str, int] = {}
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if key.startswith(("Vm", "Rss")) and len(parts) == 2 and parts[1] == "kB":
                    out[key] = int(parts[0]) * 1024
    except OSError:
        pass
    return out


def memory_facts(device: str) -> dict[str, Any]:
    """The memory of this process now: host (always) and the GPU's caching allocator (cuda)."""
    st = proc_status()
    facts: dict[str, Any] = {
        "host_vm_bytes": st.get("VmSize"),
        "host_rss_bytes": st.get("VmRSS"),
        "host_peak_rss_bytes": st.get("VmHWM"),
    }
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY:
        facts["host_as_limit_bytes"] = soft
    if device.startswith("cuda"):
        import torch

        dev = torch.device(device)
        free, total = torch.cuda.mem_get_info(dev)
        facts.update(
            gpu_index=dev.index,
            gpu_allocated_bytes=torch.cuda.memory_allocated(dev),
            gpu_reserved_bytes=torch.cuda.memory_reserved(dev),
            gpu_max_allocated_bytes=torch.cuda.max_memory_allocated(dev),
            gpu_free_bytes=free,
            gpu_total_bytes=total,
        )
    return {k: v for k, v in facts.items() if v is not None}


class Fault:
    def __init__(self, spec: LabSpec, rank: int, device: str):
        self.spec = spec
        self.rank = rank
        self.device = device
        self.bad = rank == spec.bad_rank
        self.step = 0
        self.cap: dict[str, Any] = {}
        self._delayed = False

    def batch(self, step: int) -> int:
        if self.spec.fault == "oom":
            return self.spec.batch * OOM_GROWTH**step
        return self.spec.batch

    def work_factor(self, rank: int) -> float:
        if self.spec.fault == "imbalance" and rank == self.spec.bad_rank:
            return self.spec.factor
        return 1.0

    def after_step(self, step: int) -> None:
        # The cap goes on after a first full step, so that everything a step needs besides
        # its batch (gloo buffers, optimizer state, DDP buckets) is already mapped.
        if self.spec.fault == "oom" and self.bad and step == 0:
            self.cap = self._cap_memory()

    def _cap_memory(self) -> dict[str, Any]:
        headroom = self.spec.oom_headroom_mb << 20
        if self.device.startswith("cuda"):
            import torch

            dev = torch.device(self.device)
            total = torch.cuda.get_device_properties(dev).total_memory
            fraction = min(1.0, (torch.cuda.memory_reserved(dev) + headroom * 4) / total)
            torch.cuda.set_per_process_memory_fraction(fraction, dev)
            return {"gpu_memory_fraction": round(fraction, 6), "gpu_cap_bytes": int(fraction * total)}
        vm = proc_status().get("VmSize", 0)
        limit = vm + headroom
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
        return {"host_as_limit_bytes": limit, "host_vm_at_cap_bytes": vm}

    def before_collective(self) -> None:
        """Called where the strategy is about to enter a collective or a send."""
        if (
            self.spec.fault == "timeout"
            and self.bad
            and self.step == self.spec.fault_step
            and not self._delayed
        ):
            self._delayed = True
            # Far past the peers' timeout: they fail, dump, and the launcher ends this rank.
            time.sleep(self.spec.pg_timeout_s * 6 + 30)

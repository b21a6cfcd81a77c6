"""pgdoctor: diagnose and troubleshoot multi-GPU distributed PyTorch training.

Importing pgdoctor is cheap: it imports neither torch nor pynvml.
"""

from __future__ import annotations

__version__ = "0.1.0"


# The instrumentation library, loaded on first use so `import pgdoctor` stays cheap.
_LAZY = {
    "range": "pgdoctor.trace.instrument",
    "step": "pgdoctor.trace.instrument",
    "push": "pgdoctor.trace.instrument",
    "pop": "pgdoctor.trace.instrument",
    "instrument": "pgdoctor.trace.instrument:",  # the module, which is callable: instrument(model, opt)
    "ddp_comm_hook": "pgdoctor.trace.instrument",
    "current_ranges": "pgdoctor.trace.instrument",
    "ranges_at_failure": "pgdoctor.trace.instrument",
    "phase_of": "pgdoctor.trace.instrument",
    "enable_trace": "pgdoctor.trace.instrument:enable_trace",
    # The private per-rank socket `pgdoctor hang` reads without ptrace: pgdoctor.live().
    "live": "pgdoctor.trace.live:start",
    "merge_trace": "pgdoctor.trace.events:merge",
    # The distributed-equivalence check; the package is callable: pgdoctor.verify(build, nproc=2).
    "verify": "pgdoctor.verify:",
}


# What `import pgdoctor` offers; everything else is reached through its subpackages.
__all__ = ["__version__", *_LAZY]


def __dir__() -> list[str]:
    return sorted(__all__)


def __getattr__(name: str):  # type: ignore[no-untyped-def]
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'pgdoctor' has no attribute {name!r}")
    import importlib

    module, colon, attr = target.partition(":")
    mod = importlib.import_module(module)
    value = mod if colon and not attr else getattr(mod, attr or name)
    globals()[name] = value  # later lookups skip this function
    return value

"""NVTX ranges for training scripts, following pgdoctor's naming (domain "pgdoctor").

    import pgdoctor
    handles = pgdoctor.instrument(model, optimizer)   # fwd, bwd, optim and comm.all_reduce ranges
    for n, batch in enumerate(loader):
        with pgdoctor.range("step", n=n):
            ...

A range's message is its name followed by `key=value` fields, e.g. `step n=3`,
`comm.all_reduce bucket=0 bytes=1048576`, `pp.fwd stage=1 mb=0`: short and parseable in
Nsight Systems. Ranges go to NVTX through the `nvtx` package (torch.cuda.nvtx fails on CPU
builds), which hands out a do-nothing domain when no tool is attached, so an uninstrumented
run pays only for a Python context manager (see `_nvtx_domain` for tools that the package
wrongly takes for absent). When tracing is on (pgdoctor.trace.events.enable, or
PGDOCTOR_TRACE_DIR), every closed range also becomes an event in this rank's event file.

Each thread keeps a stack of its open ranges, readable from other threads, so a rank that
fails or hangs can say where it was (`current_ranges`, `ranges_at_failure`). A range that an
exception leaves tags the exception with the stack as it was when the exception went through.
torch is imported only by `instrument` and `ddp_comm_hook`, never at import time.
"""

from __future__ import annotations

import atexit
import functools
import os
import sys
import threading
import time
import types
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Optional, TypeVar

from pgdoctor.trace import live
from pgdoctor.trace.events import EventWriter

DOMAIN = "pgdoctor"
# Training phases by range name; the innermost open phase range is "the phase".
PHASES: dict[str, str] = {
    "fwd": "forward",
    "pp.fwd": "forward",
    "bwd": "backward",
    "pp.bwd": "backward",
    "optim": "optimizer",
    "data": "data",
}
_FAILURE_ATTR = "_pgdoctor_ranges"

F = TypeVar("F", bound=Callable[..., Any])


class _Open:
    __slots__ = ("cpu0_ns", "fields", "name", "t0_ns")

    def __init__(self, name: str, fields: Mapping[str, Any], t0_ns: int, cpu0_ns: int = 0):
        self.name = name
        self.fields = fields
        self.t0_ns = t0_ns
        self.cpu0_ns = cpu0_ns

    @property
    def message(self) -> str:
        return message(self.name, self.fields)


def message(name: str, fields: Mapping[str, Any]) -> str:
    """The NVTX message of a range: `name k=v k=v` (fields in the order given)."""
    if not fields:
        return name
    return name + " " + " ".join(f"{k}={v}" for k, v in fields.items())


def parse_message(text: str) -> tuple[str, dict[str, str]]:
    """Inverse of `message`: name and fields (values as strings)."""
    name, *rest = text.split(" ")
    fields = {}
    for part in rest:
        k, sep, v = part.partition("=")
        if sep:
            fields[k] = v
    return name, fields


# --- process-wide state -------------------------------------------------------------------

_local = threading.local()
_STACKS: dict[int, list[_Open]] = {}  # thread ident -> that thread's open ranges
_STACKS_LOCK = threading.RLock()  # also taken from _Registration.__del__
_state_lock = threading.Lock()
_initialized = False
_domain: Any = None  # an nvtx Domain when a tool is attached, else None
_SINK: Optional[EventWriter] = None  # set by pgdoctor.trace.events.enable


def _init() -> None:
    """First use: create the NVTX domain (this is when NVTX loads an injected tool) and turn on
    tracing when PGDOCTOR_TRACE_DIR asks for it."""
    global _initialized, _domain
    with _state_lock:
        if _initialized:
            return
        _domain = _nvtx_domain()
        _initialized = True
    trace_dir = os.environ.get("PGDOCTOR_TRACE_DIR")
    if trace_dir and _SINK is None:
        enable_trace(trace_dir, int(os.environ.get("RANK", "0") or 0))


# Set in a process that a tool profiles: the NVTX injection variables (Nsight Systems, Nsight
# Compute and any NVTX tool set one of the first two) and Nsight Systems' own session marker.
TOOL_ENV = ("NVTX_INJECTION64_PATH", "NVTX_INJECTION32_PATH", "NSYS_PROFILING_SESSION_ID")


def tool_attached() -> bool:
    """Whether the environment names an NVTX tool for this process."""
    return any(os.environ.get(k) for k in TOOL_ENV)


def _nvtx_domain() -> Any:
    """The object that pushes and pops pgdoctor's ranges, or None when nothing receives them.

    `nvtx.get_domain` hands out a do-nothing DummyDomain unless `nvtxDomainIsEnabled` says yes,
    and that check is an NVTX extension a tool may not implement: Nsight Systems 2022.4 does not,
    so under it every range of the `nvtx` package vanished (only the domain's creation was
    recorded). When a tool is named in the environment we therefore build the domain ourselves
    and push to it directly (nvtxDomainRangePushEx, which every NVTX tool implements), or, if this
    nvtx version's classes do not allow that, to the global domain. Without a tool the check is
    skipped entirely, so an uninstrumented run keeps the dummy's zero cost."""
    try:
        import nvtx
    except ImportError:
        return None
    d = nvtx.get_domain(DOMAIN)
    if d is not nvtx._lib.dummy_domain:
        return d
    if not tool_attached():
        return None
    for name in (DOMAIN, None):  # the pgdoctor domain, else the global domain
        try:
            return _forced_domain(nvtx, name)
        except Exception:  # an nvtx version whose internals differ: try the next, else give up
            continue
    return None


def _forced_domain(nvtx: Any, name: Optional[str]) -> Any:
    """An nvtx Domain built without its enabled check (None: the global domain)."""
    lib = nvtx._lib.lib
    d = object.__new__(lib.Domain)
    d.handle = lib.DomainHandle(name)
    d.__init__(name)
    # Fails here rather than in the training loop (registering a string records no event).
    d.get_event_attributes(message="step")
    return d


def enable_trace(directory: str, rank: int) -> EventWriter:
    """Turn on tracing for this process: every closed pgdoctor range becomes an event in
    `<directory>/rank<rank>.events.jsonl` (merge them with `python -m pgdoctor.trace DIR`)."""
    global _SINK
    with _state_lock:
        if _SINK is not None:
            _SINK.flush()
        _SINK = EventWriter(directory, rank)
        return _SINK


def disable_trace() -> None:
    global _SINK
    with _state_lock:
        if _SINK is not None:
            _SINK.flush()
        _SINK = None


def flush_trace() -> None:
    sink = _SINK
    if sink is not None:
        sink.flush()


atexit.register(flush_trace)


def nvtx_enabled() -> bool:
    """Whether a tool (Nsight Systems, an injection library) receives the ranges."""
    if not _initialized:
        _init()
    return _domain is not None


class _Registration:
    """Lives in a thread's local storage, which Python drops when the thread ends: then the
    thread's stack leaves the registry (thread idents are reused)."""

    def __init__(self, ident: int, stack: list[_Open]):
        self.ident = ident
        self.stack = stack

    def __del__(self) -> None:
        with _STACKS_LOCK:
            if _STACKS.get(self.ident) is self.stack:
                del _STACKS[self.ident]


def _stack() -> list[_Open]:
    try:
        return _local.stack  # type: ignore[no-any-return]
    except AttributeError:  # first range on this thread
        s: list[_Open] = []
        ident = threading.get_ident()
        _local.stack = s
        _local.registration = _Registration(ident, s)
        with _STACKS_LOCK:
            _STACKS[ident] = s
        return s


def push(name: str, fields: Optional[Mapping[str, Any]] = None) -> None:
    """Open a range on this thread. Prefer `range(...)`; push/pop suit hooks that open in one
    callback and close in another."""
    if not _initialized:
        _init()
    f = fields or {}
    if _domain is not None:
        # Before the clock read: the first push of a message registers it with the tool, which
        # took ~10 ms under Nsight Systems, and the trace's range should start where NVTX's does.
        _domain.push_range(message=message(name, f))
    if _SINK is not None:
        _stack().append(_Open(name, f, time.perf_counter_ns(), time.thread_time_ns()))
    else:
        _stack().append(_Open(name, f, 0))


def pop(name: Optional[str] = None) -> None:
    """Close the innermost range (or, with `name`, every range down to and including the
    innermost one of that name: ranges that an exception left open are closed with it)."""
    stack = _stack()
    if not stack:
        return
    if name is None or stack[-1].name == name:  # the usual case: closing the innermost range
        _close(stack.pop())
        return
    if not any(o.name == name for o in stack):
        return
    while stack:
        o = stack.pop()
        _close(o)
        if name is None or o.name == name:
            return


def _close(o: _Open) -> None:
    if _domain is not None:
        _domain.pop_range()
    sink = _SINK
    if sink is not None and o.t0_ns:
        sink.complete(
            o.name,
            o.fields,
            o.t0_ns,
            time.perf_counter_ns(),
            depth=len(_stack()),
            cpu_ns=(o.cpu0_ns, time.thread_time_ns()),
        )


def _tag_failure(exc: BaseException, stack: list[_Open]) -> None:
    if getattr(exc, _FAILURE_ATTR, None) is None:
        ranges = tuple(o.message for o in stack)
        try:
            setattr(exc, _FAILURE_ATTR, ranges)
        except (AttributeError, TypeError):
            pass


class range:
    """A named range: `with pgdoctor.range("data"):` or `@pgdoctor.range("fwd")`."""

    __slots__ = ("fields", "name")

    def __init__(self, name: str, **fields: Any):
        self.name = name
        self.fields = fields

    def __enter__(self) -> range:
        push(self.name, self.fields)
        return self

    def __exit__(self, exc_type: Any, exc: Optional[BaseException], tb: Any) -> None:
        if exc is not None:
            _tag_failure(exc, _stack())
        pop(self.name)

    def __call__(self, fn: F) -> F:
        name, fields = self.name, self.fields

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with range(name, **fields):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def step(n: int) -> range:
    """The range of one training step: `step n=<n>`."""
    live.note_step(n)  # the live socket's step counter: progress that `pgdoctor run` can see
    return range("step", n=n)


# --- where a thread is ------------------------------------------------------------------


def current_ranges(thread_ident: Optional[int] = None) -> tuple[str, ...]:
    """Messages of the open ranges of a thread (default: the main thread), outermost first."""
    ident = thread_ident if thread_ident is not None else threading.main_thread().ident
    with _STACKS_LOCK:
        stack = list(_STACKS.get(ident or 0, ()))
    return tuple(o.message for o in stack)


live.set_ranges_reader(current_ranges)


def ranges_at_failure(exc: Optional[BaseException] = None) -> tuple[str, ...]:
    """The ranges that were open where `exc` (default: the exception being handled) was raised,
    as recorded when it left a `range`; otherwise the ranges open on this thread now (hook
    ranges that the failure left open)."""
    if exc is None:
        exc = sys.exc_info()[1]
    tagged = getattr(exc, _FAILURE_ATTR, None) if exc is not None else None
    if tagged is not None:
        return tuple(tagged)
    return tuple(o.message for o in _stack())


def phase_of(ranges: tuple[str, ...]) -> str:
    """The training phase (forward, backward, optimizer, data) of the innermost phase range,
    or "" when none is open."""
    for text in reversed(ranges):
        name = text.split(" ", 1)[0]
        if name in PHASES:
            return PHASES[name]
    return ""


def reset_thread() -> None:
    """Close every range this thread has open (after a failure that left hook ranges open)."""
    stack = _stack()
    while stack:
        _close(stack.pop())


# --- hooks: model, optimizer, DDP ---------------------------------------------------------


class Handles:
    """What `instrument` attached; `remove()` detaches it (the DDP comm hook stays: torch
    allows one per model and no removal)."""

    def __init__(self) -> None:
        self._handles: list[Any] = []
        self.comm_hook = False

    def add(self, handle: Any) -> None:
        self._handles.append(handle)

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._handles)


def instrument(
    model: Any = None,
    optimizer: Any = None,
    *,
    comm_hook: bool = True,
    overlap: bool = True,
    live_socket: bool = True,
) -> Handles:
    """Add `fwd`, `bwd` and `optim` ranges to a model and an optimizer through hooks, and
    wrap each DDP bucket's all-reduce in `comm.all_reduce bucket=<i> bytes=<n>`.

    `fwd` spans the model's forward (pre-hook to hook). `bwd` opens when the gradient of the
    model's output arrives (a tensor hook on the outputs) and closes when autograd finishes the
    whole backward pass (a callback queued on the autograd engine, as DDP does). `optim` spans
    optimizer.step(). A hook range that a failure left open is closed when the next one opens.
    With `overlap=False` the comm hook waits for each all-reduce inside its range, so the range
    measures the time spent waiting for the slowest rank (at the cost of DDP's overlap).
    With `live_socket` (the default; PGDOCTOR_LIVE=0 also turns it off) the rank's private socket for
    `pgdoctor hang` starts (pgdoctor.trace.live), so a hang can be read without ptrace.
    """
    import torch

    if live_socket:
        try:
            live.start()
        except OSError as exc:  # a foreign /tmp/pgdoctor-live-<uid>: the job runs on, without the tier
            print(f"pgdoctor: live socket not started: {exc}", file=sys.stderr)

    handles = Handles()
    if model is not None:
        in_bwd = [False]  # one `bwd` per backward pass, however many outputs get gradients

        def bwd_end() -> None:
            in_bwd[0] = False
            pop("bwd")

        def bwd_start(grad: Any) -> None:
            if not in_bwd[0]:
                in_bwd[0] = True
                push("bwd")
                torch.autograd.Variable._execution_engine.queue_callback(bwd_end)

        def fwd_end(mod: Any, args: Any, out: Any) -> None:
            pop("fwd")
            # A tensor hook on the outputs fires when their gradient arrives: the start of the
            # model's backward. (A module full-backward hook would wrap the outputs in an extra
            # autograd node and warn when the inputs need no gradient.)
            if torch.is_grad_enabled():
                for t in _tensors(out):
                    if t.requires_grad:
                        t.register_hook(bwd_start)

        def fwd_start(mod: Any, args: Any) -> None:
            if in_bwd[0] and torch._C._current_graph_task_id() == -1:
                in_bwd[0] = False  # the last backward raised before its end callback ran
                pop("bwd")
            _reopen("fwd")

        handles.add(model.register_forward_pre_hook(fwd_start))
        handles.add(model.register_forward_hook(fwd_end))
        if comm_hook and isinstance(model, torch.nn.parallel.DistributedDataParallel):
            model.register_comm_hook(model.process_group, ddp_comm_hook(overlap=overlap))
            handles.comm_hook = True
    if optimizer is not None:
        handles.add(optimizer.register_step_pre_hook(lambda opt, args, kwargs: _reopen("optim")))
        handles.add(optimizer.register_step_post_hook(lambda opt, args, kwargs: pop("optim")))
    return handles


def _reopen(name: str) -> None:
    """Open a hook range, first closing one of that name that a failure left open (its closing
    hook never ran), so a script that catches the error and goes on gets a clean stack."""
    if any(o.name == name for o in _stack()):
        pop(name)
    push(name)


def _tensors(out: Any) -> list[Any]:
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for t in out if isinstance(t, torch.Tensor)]
    if isinstance(out, dict):
        return [t for t in out.values() if isinstance(t, torch.Tensor)]
    return []


def ddp_comm_hook(*, overlap: bool = True) -> Callable[[Any, Any], Any]:
    """A DDP communication hook: the default averaging all-reduce of each bucket, inside a
    `comm.all_reduce bucket=<index> bytes=<bytes>` range. Register it with
    `ddp_model.register_comm_hook(ddp_model.process_group, pgdoctor.ddp_comm_hook())`."""
    import torch.distributed as dist

    def hook(process_group: Any, bucket: Any) -> Any:
        buf = bucket.buffer()
        fields = {"bucket": bucket.index(), "bytes": buf.numel() * buf.element_size()}
        group = process_group if process_group is not None else dist.group.WORLD
        with range("comm.all_reduce", **fields):
            buf.div_(dist.get_world_size(group))
            t0 = time.perf_counter_ns()
            fut = dist.all_reduce(buf, group=group, async_op=True).get_future()
            if not overlap:
                fut.wait()
        sink = _SINK
        if overlap and sink is not None:
            # The range above covers the launch; the trace also gets the all-reduce's whole life
            # (launch to completion) on the rank's comm track.
            def done(f: Any) -> Any:
                sink.complete("comm.all_reduce", fields, t0, time.perf_counter_ns(), track="comm")
                return f.value()[0]

            return fut.then(done)
        return fut.then(lambda f: f.value()[0])

    # DDP rejects hooks whose annotations are not dist.GradBucket / Future (string annotations
    # included), so the typed signature above is for readers only.
    hook.__annotations__ = {}
    return hook


class _CallableModule(types.ModuleType):
    """`pgdoctor.instrument` is this module (pgdoctor's lazy attribute hands it out), so calling
    the module instruments: `pgdoctor.instrument(model, optimizer)`."""

    def __call__(self, model: Any = None, optimizer: Any = None, **kwargs: Any) -> Handles:
        return instrument(model, optimizer, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

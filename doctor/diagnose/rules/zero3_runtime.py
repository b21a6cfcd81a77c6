"""DeepSpeed ZeRO-3's runtime (deepspeed/runtime/zero/), read at its source in 0.9.5, 0.12.6 and 0.16.9 (and
stage 1/2's unused-parameter assert, RUN202, at the rows).

The parameter coordinator (partitioned_param_coordinator.py) keeps a trace of the order in which the
model's submodules ran in the first step and prefetches parameters along it; parameter_offload.py and
partition_parameters.py check each parameter's status (ds_summary(), a dict "{'id': 5, 'status':
'AVAILABLE', 'numel': ..., 'ds_tensor.shape': ...}") before they gather or release it. When the modules
run in another order or number than the trace (data-dependent submodules, a branch taken on some steps,
generation, a forward outside the engine), the coordinator finds parameters still in flight or in the
wrong state:
- reset_step (0.6-0.14): "RuntimeError: still have inflight params [{'id': 586, 'status': 'AVAILABLE',
  ...}]" (raised from _end_of_forward_hook's reset_step or the engine's step);
- fetch_sub_module (0.6-0.16): "RuntimeError: tracing error at step 3: \nmodule id: 12, training: True\n
  expected the next 2 parameters in the parameter fetch queue to be (...) \nbut got \n (...)."; the status
  asserts "AssertionError: {'id': 12, 'status': 'NOT_AVAILABLE', ...}" (assert param.ds_status ==
  AVAILABLE / INFLIGHT, param.ds_summary());
- release and registry checks: "param {...} still in flight", "{...} expected to be released" (also
  parameter_offload.py), "{...} already in registry", "attempted to add non-inflight parameter to registry
  {...}", partition_parameters.py's "expected param {...} to be inflight" and "expect param.ds_status ==
  ZeroParamStatus.NOT_AVAILABLE, got{...}";
- the trace's own state machine: "attempted to record trace when status = ZeRoTraceMode.COMPLETE",
  "attempted to invalidate already invalid trace", "expected trace to be complete".
The ranks then all-gather different parameters (or a parameter twice): RUN510 (collective_mismatch); the
known workarounds are stage3_prefetch_bucket_size 0, another DeepSpeed release, or ZeRO-2. (ZeRO-3's
"Invalidate trace cache" notes and assert_ints_same_as_other_ranks' "disagreement between rank0 and rankN"
are desync_reports'; a hung rank's fetch in a stack dump is stuck_stacks' RUN358.)

stage3.py's step (0.3-0.16), on rank 0, when torch's caching allocator had to free its cache and retry an
allocation (memory_stats' num_alloc_retries grew) since the last step: "[WARNING] [stage3.py:2134:step] 10
pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is
detrimental to performance. ..." (the remedy sentence says "torch.cuda.empty_cache()" before 0.10 and
"get_accelerator().empty_cache()" after). The GPU is at its memory limit: the next larger batch or
sequence is an OOM (RUN511, cuda_oom, a warning at tier 1 behind any failure) when it is frequent, as the
warning itself says: several flushes in one step, or the warning again; a single flush once is printed by
healthy runs too (tests/helpers/healthy_logs.py) and stays silent.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# ds_summary()'s dict as the error prints it: its id (an int, or a debug name) and its status.
_SUMMARY = r"\{'id': (?P<id>[^,\n]{1,120}), 'status': '(?P<status>NOT_AVAILABLE|AVAILABLE|INFLIGHT)'"
_INFLIGHT = lazy_re.compile(r"still have inflight params(?: \[" + _SUMMARY + r")?")
_TRACING = lazy_re.compile(
    r"tracing error at step (?P<step>\d+)|"
    r"expected the next (?P<n>\d+) parameters in the parameter fetch queue"
)
# A status check on one parameter: the assert's bare summary after the exception type, or the summary
# inside one of the coordinator's sentences.
_STATUS = lazy_re.compile(
    r"(?:AssertionError: |RuntimeError: |param |got ?|^\s*)" + _SUMMARY + r"(?:[^\n]*?"
    r"(?P<what>still in flight|expected to be released|already in registry|to be inflight))?[^\n]*$"
)
_REGISTRY = lazy_re.compile(r"attempted to add non-inflight parameter to registry")
_TRACE_STATE = lazy_re.compile(
    r"attempted to record trace when status = (?P<mode>[\w.]+)|attempted to invalidate already invalid "
    r"trace|expected trace to be complete"
)
_FLUSHES = lazy_re.compile(
    r"(?P<n>\d+) pytorch allocator cache flushes since last step(?:\. this happens when there is high "
    r"memory pressure)?"
)
_REMEDY = (
    "set stage3_prefetch_bucket_size to 0 in the ZeRO config (no prefetch along the trace), make every "
    "step run the same submodules in the same order, or try another DeepSpeed release or ZeRO-2"
)


def _facts(m: re.Match[str], kind: str) -> dict[str, Any]:
    facts: dict[str, Any] = {"framework": "deepspeed", "zero_stage": 3, "kind": kind}
    gd = m.groupdict()
    pid = (gd.get("id") or "").strip()
    if pid.isdigit() and len(pid) <= 9:
        facts["param_id"] = int(pid)
    elif pid:
        facts["param_name"] = pid.strip("'\"")
    if gd.get("status"):
        facts["param_status"] = gd["status"]
    return facts


def _mismatch(row: Signature, hit: Hit, facts: dict[str, Any], what: str) -> list[Event]:
    return [
        row.event(
            hit,
            f"DeepSpeed ZeRO-3 {what}: the modules ran in another order or number than the parameter "
            f"trace it prefetches along, so the ranks gather different parameters; {_REMEDY}",
            facts,
            dedupe=(row.code, "zero3_coordinator"),
        )
    ]


def _inflight(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # the traceback's source line; the exception line below it says the same with the parameters
    if "raise RuntimeError" in hit.text and any(
        "Error: still have inflight params" in ln.text for ln in hit.after(3, same_rank=False)
    ):
        return []
    return _mismatch(
        row, hit, _facts(m, "zero3_inflight_params"), "still had parameters in flight at the end of a step"
    )


def _tracing(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts = _facts(m, "zero3_tracing_error")
    if m.group("step"):
        facts["step"] = int(m.group("step"))
    return _mismatch(row, hit, facts, "found other parameters than its trace expected next")


_STATUS_WORDS = {
    "still in flight": "found a parameter still in flight that it was to release",
    "expected to be released": "found a parameter not released after its module",
    "already in registry": "was gathering a parameter that was already being gathered",
    "to be inflight": "found a parameter not in flight that it waited for",
}


def _status(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    what = m.group("what")
    if what is None and m.group(0).startswith("param"):
        return None  # a parameter's summary printed for another reason (a debug print)
    if m.group(0).lstrip().startswith("{") and "'ds_numel'" not in hit.text:
        return None  # a bare dict (the assert's message without its type) must be a whole ds_summary
    facts = _facts(m, "zero3_param_status")
    said = _STATUS_WORDS.get(what or "", f"found a parameter in the wrong state ({m.group('status')})")
    return _mismatch(row, hit, facts, said)


def _registry(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "deepspeed", "zero_stage": 3, "kind": "zero3_param_status"}
    return _mismatch(row, hit, facts, "was asked to track a parameter that was not being gathered")


def _trace_state(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "deepspeed", "zero_stage": 3, "kind": "zero3_trace_state"}
    if m.group("mode"):
        facts["trace_mode"] = m.group("mode")
    return _mismatch(row, hit, facts, "found its module trace in an unexpected state")


def _flushes(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    n = int(m.group("n")) if len(m.group("n")) <= 9 else None
    again = sum("allocator cache flushes since last step" in ln.text for ln in hit.after(48, same_rank=False))
    if n == 1 and not again:
        # DeepSpeed's own words: detrimental "if this is happening frequently"; one flush once is a note
        # that healthy runs print too
        return []
    facts: dict[str, Any] = {
        "framework": "deepspeed",
        "zero_stage": 3,
        "likely_cause": "insufficient_memory",
        "kind": "allocator_cache_flushes",
    }
    if n is not None:
        facts["cache_flushes"] = n
    return [
        row.event(
            hit,
            f"DeepSpeed ZeRO-3 saw {m.group('n')} PyTorch allocator cache flush(es) in one step: the GPU is "
            "at its memory limit (each allocation that fails is retried after freeing the cache); a larger "
            "batch or sequence will run out of memory. Lower the micro-batch or sequence length, or "
            "stage3_max_live_parameters / stage3_prefetch_bucket_size, or offload",
            facts,
            dedupe=(row.code, "zero3_flushes"),
        )
    ]


# ZeRO stage 1/2's own unused-parameter check (runtime/zero/stage_1_and_2.py reduce_ipg_grads / the backward
# hooks, 0.5-0.16): 'assert self.ignore_unused_parameters, """ This assert indicates that your module has
# parameters that were not used in producing loss. You can avoid this assert by (1) enable
# ignore_unused_parameters option in zero_optimization config; (2) making sure all trainable parameters and
# `forward` function outputs participate in calculating loss."""' - DDP's "Expected to have finished
# reduction" of ZeRO (RUN202): a parameter that got no gradient leaves its bucket unreduced.
_UNUSED = lazy_re.compile(
    r"This assert indicates that your module has parameters that(?: were not used in producing loss)?|"
    r"enable ignore_unused_parameters option in zero_optimization config"
)


def _unused(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "DeepSpeed ZeRO (stage 1/2) found parameters that were not used in producing the loss: their "
            "gradients never arrive, so the reduction cannot finish; set ignore_unused_parameters: true in "
            "zero_optimization, or make every trainable parameter take part in the loss (freeze the others)",
            {"framework": "deepspeed", "kind": "zero_unused_parameters"},
            dedupe=(row.code, "zero_unused"),
        )
    ]


SIGNATURES = (
    Signature(
        "zero3 inflight params at reset_step",
        _INFLIGHT,
        _inflight,
        C.ZERO3_TRACE_MISMATCH.code,
        anchors=(b"still have inflight params",),
        words=("still have inflight params",),
    ),
    Signature(
        "zero3 tracing error",
        _TRACING,
        _tracing,
        C.ZERO3_TRACE_MISMATCH.code,
        anchors=(b"tracing error at step", b"in the parameter fetch queue"),
        worth=(rb"tracing error at step \d", rb"in the parameter fetch queue"),
        words=("tracing error at step", "in the parameter fetch queue"),
    ),
    Signature(
        "zero3 parameter status check",
        _STATUS,
        _status,
        C.ZERO3_TRACE_MISMATCH.code,
        anchors=(b"'status': '",),
        worth=(rb"\{'id': [^,]{1,120}, 'status': '(?:NOT_AVAILABLE|AVAILABLE|INFLIGHT)'",),
        words=("'status': '",),
        anchor_from="the ds_summary dict's status key",
        examples=(
            "AssertionError: {'id': 12, 'status': 'NOT_AVAILABLE', 'numel': 4096, 'ds_numel': 4096, "
            "'shape': (64, 64), 'ds_shape': (64, 64), 'requires_grad': True, 'grad_shape': None, "
            "'persist': False, 'active_sub_modules': {5}, 'ds_tensor.shape': torch.Size([512])}",
        ),
    ),
    Signature(
        "zero3 registry of a parameter not in flight",
        _REGISTRY,
        _registry,
        C.ZERO3_TRACE_MISMATCH.code,
        anchors=(b"non-inflight parameter to registry",),
        words=("non-inflight parameter to registry",),
    ),
    Signature(
        "zero3 trace state machine",
        _TRACE_STATE,
        _trace_state,
        C.ZERO3_TRACE_MISMATCH.code,
        anchors=(
            b"attempted to record trace when status",
            b"invalidate already invalid trace",
            b"expected trace to be complete",
        ),
        words=(
            "attempted to record trace when status",
            "invalidate already invalid trace",
            "expected trace to be complete",
        ),
    ),
    Signature(
        "zero unused parameters assert",
        _UNUSED,
        _unused,
        C.DDP_UNFINISHED_REDUCTION.code,
        anchors=(
            b"This assert indicates that your module has parameters",
            b"ignore_unused_parameters option",
        ),
        words=("this assert indicates that your module has parameters", "ignore_unused_parameters option"),
    ),
    Signature(
        "zero3 allocator cache flushes",
        _FLUSHES,
        _flushes,
        C.GPU_MEMORY_PRESSURE.code,
        tier=1,
        anchors=(b"pytorch allocator cache flushes",),
        worth=(rb"allocator cache flushes since last step",),
        words=("allocator cache flushes",),
    ),
)

parse = gated_reader(SIGNATURES)

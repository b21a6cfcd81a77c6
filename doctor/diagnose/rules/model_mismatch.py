"""collective_mismatch read from one rank's error: DDP's bucket rebuild finding another rank's parameter
order (torch/csrc/distributed/c10d/reducer.cpp), TensorFlow's collective group resolution finding members
that formed the group differently (core/common_runtime/collective_param_resolver_local.cc), and a pipeline
stage's backward given a gradient of another shape than its output by the next stage (autograd's
_make_grads under a pipeline schedule)."""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

# reducer.cpp rebuild_buckets (1.7+) when the parameter order rank 0 recorded in the first iteration does not
# cover this rank's parameters (the ranks' graphs or models differ, or a rank ran a backward the others did
# not): 1.7-1.10 "replicas_[0].size() == rebuilt_param_indices_.size() INTERNAL ASSERT FAILED at
# .../reducer.cpp:1326 ... rebuilt parameter indices size is not same as original model parameters
# size.538 versus 1076000", 1.11+ "params_.size() == rebuilt_param_indices_.size() ... rebuilt parameter
# indices size is not same as original model parameters size.Original model param size is: 10 versus
# rebuilt params size of: 20".
_REBUILT = lazy_re.compile(
    r"rebuilt parameter indices size is not same as original model parameters size\.?\s*"
    r"(?:Original model param size is:\s*)?(?:(\d+) versus (?:rebuilt params size of:\s*)?(\d+))?|"
    r"(?:replicas_\[0\]|params_)\.size\(\) == rebuilt_param_indices_\.size\(\)"
)
# TensorFlow's collective group resolution (core/common_runtime/collective_param_resolver_local.cc) when the
# members of one group_key disagree: "Device /job:worker/replica:0/task:1/device:GPU:0 is joining a group
# with incompatible device typeCPU (group_key=3)", "Device ... is joining a group with size2, but that group
# has size 4 (group_key=1)".
_TF_GROUP = lazy_re.compile(
    r"Device (\S+) is joining a group with (incompatible device type ?\w*|size ?\d+, but that group has "
    r"size ?\d+)"
)
# The same checks as TF 1.x-2.3 worded them (CompleteGroupLocal, before the device-based texts above):
# "Collective Op CollectiveReduce: Reduce(Add,Id) has group_size 6 and group_key 1 but that group has size 4"
# (2.x; 1.x "and group_key1", no space; the op name may be empty: "Collective Op  has group_size 8 and
# group_key2 ..."), "Collective Op <name> is assigned to device <dev> with type GPU and group_key 3 but that
# group has type CPU", and "Collective Op <name> is assigned to device <dev> and group_key 1 but that group
# doesn't contain that device." (the group was already full: more members than its size). Workers that
# disagree on the group (a different number of GPUs per worker, or a worker that builds another strategy).
_TF_GROUP_OLD = lazy_re.compile(
    r"Collective Op (?P<op>.{0,80}?) ?(?:has group_size ?(?P<size>\d+) and group_key ?(?P<key>\d+) but that "
    r"group has size ?(?P<other>\d+)|is assigned to device (?P<dev>\S+) (?:with type (?P<type>\w+) )?and "
    r"group_key ?(?P<key2>\d+) but that group (?:has type (?P<other_type>\w+)|doesn't contain that device))"
)

# The same resolver when members of one instance_key pass tensors of different shapes
# (CompleteInstanceFromInitializedIRec, TF 2.2-2.19, collective_param_resolver_local.cc): "Shape mismatch in
# the collective instance 106. Op at device /job:worker/replica:0/task:1/device:CPU:0 expected shape [49] but
# another member in the group expected shape [64]. This is likely due to different input shapes at different
# members of the collective op." (raised as InvalidArgument, logged by OP_REQUIRES or wrapped in
# InternalError).
_TF_SHAPE = lazy_re.compile(
    r"Shape mismatch in the collective instance (?P<inst>\d+)"
    r"(?:\. Op at device (?P<dev>\S+) expected shape (?P<mine>\[[^\]]*\]) but another member in the group "
    r"expected shape (?P<other>\[[^\]]*\]))?"
)


def _rebuilt(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "ddp_rebuilt_indices"}
    sizes = _REBUILT.search(hit.line.text, m.end()) if not m.group(1) else m
    if sizes is not None and sizes.group(1):
        facts.update(model_params=int(sizes.group(1)), rebuilt_indices=int(sizes.group(2)))
    return [
        row.event(
            hit,
            "DDP's bucket rebuild found a parameter order that does not match this rank's model: the ranks "
            "ran different graphs or models in the first iterations (a rank-dependent branch, an extra "
            "forward/backward on some ranks, different model construction)",
            facts,
            dedupe=(row.code, "ddp_rebuilt"),
        )
    ]


def _tf_group(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"TensorFlow collectives: {m.group(1)} joined a collective group that other members formed "
            f"differently ({m.group(2)}): the workers built different collective groups",
            {"kind": "tf_group_mismatch", "device": m.group(1), "differ": m.group(2)},
            dedupe=(row.code, "tf_group"),
        )
    ]


def _tf_group_old(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    op = m.group("op").strip() or "a collective op"
    facts: dict[str, Any] = {"kind": "tf_group_mismatch", "group_key": int(m.group("key") or m.group("key2"))}
    if m.group("size"):
        facts.update(group_size=int(m.group("size")), other_group_size=int(m.group("other")))
        differ = f"group_size {m.group('size')} here, {m.group('other')} in the group others formed"
    elif m.group("other_type"):
        facts.update(device=m.group("dev"), device_type=m.group("type"), other_type=m.group("other_type"))
        differ = f"{m.group('type')} device here, {m.group('other_type')} in the group"
    else:
        facts["device"] = m.group("dev")
        differ = f"the group was already full without {m.group('dev')}"
    return [
        row.event(
            hit,
            f"TensorFlow collectives: {op} joined collective group {facts['group_key']} that other members "
            f"formed differently ({differ}): the workers built different collective groups (a different "
            "number of devices per worker, or different strategies)",
            facts,
            dedupe=(row.code, "tf_group"),
        )
    ]


def _tf_shape(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "tf_instance_shape", "instance_key": int(m.group("inst"))}
    said = ""
    if m.group("dev"):
        facts.update(device=m.group("dev"), shape=m.group("mine"), other_shape=m.group("other"))
        said = f": {m.group('dev')} has {m.group('mine')}, another member {m.group('other')}"
    return [
        row.event(
            hit,
            f"TensorFlow collective instance {m.group('inst')}: the members passed tensors of different "
            f"shapes{said} (the workers built different models or batches: a desync)",
            facts,
            dedupe=(row.code, "tf_instance_shape"),
        )
    ]


# torch/autograd/__init__.py _make_grads (1.x-2.x): "RuntimeError: Mismatch in shape: grad_output[0] has a
# shape of torch.Size([1, 128, 768]) and output[0] has a shape of torch.Size([1, 129, 768])." Under a
# pipeline schedule the gradient is the one the next stage sent back (ColossalAI's backward_by_grad and
# pipeline/schedule/*.py, DeepSpeed's runtime/pipe/engine.py _exec_backward_pass, Megatron's schedules.py
# backward_step, torch.distributed.pipelining's stage_backward, fairscale's pipe): the stages disagree on the
# shapes they exchange (a sequence length that changes between batches with the p2p shape metadata cached
# from the first one, a micro-batch of another size). Outside a pipeline it is the program's own backward
# (left to the exception rows).
# A paste cut inside the message keeps its head ("... has a shape of torch.Size([8, 4096]) and output[0] h"):
# the gradient's shape, or only the index, still says the exchange disagreed.
_GRAD_SHAPE = lazy_re.compile(
    r"Mismatch in shape: grad_output\[(?P<i>\d+)\](?: has a shape of (?P<grad>torch\.Size\(\[[\d, ]*\]\)))?"
    r"(?: and output\[\d+\] has a shape of (?P<out>torch\.Size\(\[[\d, ]*\]\)))?"
)
_PIPELINE_FRAME = lazy_re.compile(
    r"backward_by_grad|/pipeline/|/pipe/|pipelining/|schedules\.py|backward_step|_exec_backward_pass|"
    r"stage_backward|pipeline_parallel|one_f_one_b|interleaved_pp|zero_bubble"
)


def _grad_shape(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_PIPELINE_FRAME.search(ln.text) for ln in hit.before(40, same_rank=False)):
        return None
    facts: dict[str, Any] = {"problem": "pipeline_grad_shape_mismatch"}
    if m.group("grad"):
        facts["grad_shape"] = m.group("grad")
    if m.group("out"):
        facts["output_shape"] = m.group("out")
    grad = f"a gradient of {m.group('grad')}" if m.group("grad") else "a gradient of another shape"
    out = f" for an output of {m.group('out')}" if m.group("out") else ""
    return [
        row.event(
            hit,
            f"a pipeline stage's backward got {grad} from the next stage{out}: the stages disagree on the "
            "shapes they exchange (a sequence length that changes between batches while the p2p shape "
            "metadata is cached, or micro-batches of different sizes)",
            facts,
            dedupe=(row.code, "pipeline_shapes"),
        )
    ]


# torch.distributed.pipelining's check of what a stage receives and sends against the metadata its
# schedule was built with (_utils.py validate_tensors_metadata, 2.4+, raised from stage.py as
# PipeliningShapeError, "Shape mismatch between configured and runtime values"): "Stage 1 forward inputs:
# value 0 has a shape mismatch: expected torch.Size([2, 16, 64]) actual torch.Size([2, 15, 64])", "... has
# a dtype mismatch: expected torch.float32 actual torch.bfloat16", "Stage 0 forward outputs: Number of
# values (2) does not match expected number (1)": the stages disagree on what they exchange (a sequence
# length or micro-batch size that changed after the shapes were inferred from the first batch or given as
# input_args).
_PP_META = lazy_re.compile(
    r"Stage (?P<stage>\d+) (?P<dir>forward|backward) (?P<what>\w+): "
    r"(?:value (?P<i>\d+) has a (?P<kind>shape|dtype|stride) mismatch: "
    r"expected (?P<exp>.+?) actual (?P<act>.+)"
    r"|Number of values \((?P<got>\d+)\) does not match expected number \((?P<want>\d+)\))"
)


def _pp_meta(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    stage = int(m.group("stage"))
    facts: dict[str, Any] = {"problem": "pipeline_stage_metadata_mismatch", "stage": stage}
    facts["exchange"] = f"{m.group('dir')} {m.group('what')}"
    if m.group("kind"):
        facts.update(kind=m.group("kind"), expected=m.group("exp").strip(), actual=m.group("act").strip())
        what = f"a {m.group('kind')} of {facts['actual']} where {facts['expected']} was expected"
    else:
        facts.update(kind="count", expected=int(m.group("want")), actual=int(m.group("got")))
        what = f"{m.group('got')} values where {m.group('want')} were expected"
    return [
        row.event(
            hit,
            f"pipeline stage {stage}'s {facts['exchange']} had {what}: the stages disagree on the tensors "
            "they exchange (a sequence length or micro-batch size that changed after the schedule's shapes "
            "were set)",
            facts,
            dedupe=(row.code, "pipeline_meta", stage),
        )
    ]


# torch.distributed.pipelining's stage_backward (_backward.py, 2.4-2.13; PiPPy's pippy/backward.py before it,
# and the ports of it in other frameworks) pairs each output of the stage with the gradient the next stage
# sent back, in extract_tensors_with_grads: "grad_value expected to have type <class 'tuple'> but got <class
# 'torch.Tensor'>", "Expected Tensor or None gradient but got <class 'tuple'>", and the bare asserts
# `assert len(output_val) == len(grad_val)` / `assert set(output_val.keys()) == set(grad_val.keys())` (an
# AssertionError with no text: the traceback's last source line is the message). stage_backward re-raises
# it as "Failed to run stage backward:" with the stage output and output gradient listed. The stages
# disagree on what they exchange (a stage that returns more or fewer tensors than the next one sends
# gradients for: outputs and grads out of step between microbatches or schedules).
_STAGE_GRADS = lazy_re.compile(
    r"assert len\(output_val\) == len\(grad_val\)|assert set\(output_val\.keys\(\)\) == "
    r"set\(grad_val\.keys\(\)\)|grad_value expected to have type (?P<want>\S+(?: '[\w.]+'>)?) but got "
    r"(?P<got>\S+(?: '[\w.]+'>)?)|Expected Tensor or None gradient but got (?P<got2>\S+(?: '[\w.]+'>)?)"
)
_STAGE_FRAME = lazy_re.compile(r"extract_tensors_with_grads|stage_backward|pipelining/|/pippy/")


def _stage_grads(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not any(_STAGE_FRAME.search(ln.text) for ln in (hit.line, *hit.before(40, same_rank=False))):
        return None
    facts: dict[str, Any] = {"problem": "pipeline_stage_grads_mismatch", "check": m.group(0)[:80]}
    if m.group("want"):
        facts.update(output_type=m.group("want"), grad_type=m.group("got"))
    elif m.group("got2"):
        facts["grad_type"] = m.group("got2")
    return [
        row.event(
            hit,
            "a pipeline stage's backward (stage_backward's extract_tensors_with_grads) could not pair its "
            "outputs with the gradients the next stage sent back ("
            + m.group(0)[:80]
            + "): the stages disagree on what they exchange (the number, type or keys of the stage's outputs "
            "differ from the gradients received)",
            facts,
            dedupe=(row.code, "pipeline_shapes"),
        )
    ]


# stage_backward's own report of a failed backward (torch.distributed.pipelining/_backward.py 2.4+, PiPPy's
# backward.py, PaddlePaddle's port): "Failed to run stage backward:", then on the next lines "Stage output:
# ('Tensor(torch.Size([10]), grad=True)',)" and "Output gradient: ['Tensor(torch.Size([1, 10]), grad=False)']"
# (each entry Tensor(shape, grad=..., dtype=...) in 2.5+), or all on one line in later forks ("failed to run
# stage backward input: outputs=(...), grads=(...), inputs=(...)"). The wrapper re-raises any error of the
# backward (memory, a kernel), so it says a mismatch only where the lists show one: as many shapes on both
# sides, and a pair that differs (the next stage sent back a gradient of another shape than this stage's
# output).
_STAGE_BWD = lazy_re.compile(r"[Ff]ailed to run stage backward\b")
_STAGE_OUT = lazy_re.compile(
    r"(?:Stage output:|outputs=)(?P<out>.*?)(?:Output gradient:|grads=)(?P<grad>.*?)(?:Input:|inputs=|$)"
)
_SIZE = lazy_re.compile(r"(?:torch\.Size\(|shape=)?\[(?P<dims>[\d, ]*)\]")


def _shapes(text: str) -> list[str]:
    return [
        "[" + ", ".join(d for d in m.group("dims").replace(" ", "").split(",") if d) + "]"
        for m in _SIZE.finditer(text)
    ]


def _stage_bwd(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    text = " ".join([hit.text, *(ln.text for ln in hit.after(6, same_rank=False))])
    lists = _STAGE_OUT.search(text)
    if lists is None:
        return None
    outs, grads = _shapes(lists.group("out")), _shapes(lists.group("grad"))
    pairs = [(o, g) for o, g in zip(outs, grads) if o != g]
    if not outs or len(outs) != len(grads) or not pairs:
        return None  # no shapes, or they agree: the backward failed for another reason (the chained error)
    out, grad = pairs[0]
    return [
        row.event(
            hit,
            f"a pipeline stage's backward failed with a gradient of {grad} from the next stage for an output "
            f"of {out} (stage_backward's report): the stages disagree on the shapes they exchange",
            {"problem": "pipeline_grad_shape_mismatch", "grad_shape": grad, "output_shape": out},
            dedupe=(row.code, "pipeline_shapes"),
        )
    ]


# DeepSpeed's PipelineEngine computes the loss on the last stage (runtime/pipe/engine.py _exec_forward_pass,
# 0.3-0.16: "self.loss = self.module.loss_fn(outputs, labels)", later "losses = ..."): the outputs are the
# activations that came through the stages, the labels the last stage loaded from its own data iterator.
# A loss function's shape check failing there ("The size of tensor a (8) must match the size of tensor b (4)
# at non-singleton dimension 0" from broadcast_tensors under mse_loss / l1_loss, cross_entropy's "Expected
# input batch_size (8) to match target batch_size (4)", binary_cross_entropy's "Target size (...) must be the
# same as input size (...)") says the two came from different micro-batches: the stages are out of step
# (samples of varying shapes, a data iterator on the last stage that is not the first stage's). A paste cut
# inside the traceback whose last frame is broadcast_tensors says the same.
_PIPE_LOSS = lazy_re.compile(r"(?:self\.loss|losses|output) = self\.module\.loss_fn\(outputs, labels")
_LOSS_SHAPES = lazy_re.compile(
    r"The size of tensor a \(\d+\) must match the size of tensor b \(\d+\)|"
    r"Expected input batch_size \(\d+\) to match target batch_size \(\d+\)|"
    r"Target size \(torch\.Size\(\[[\d, ]*\]\)\) must be the same as input size|"
    r"Using a target size \(torch\.Size\(\[[\d, ]*\]\)\) that is different to the input size"
)
_BROADCAST = lazy_re.compile(r"torch\.broadcast_te|\bbroadcast_tensors\(")
_FRAME = lazy_re.compile(r'File "[^"]+", line \d+|^\s*File \S+:\d+')


def _pipe_loss(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    after = hit.after(24, same_rank=False)
    found = next((s.group(0) for ln in after if (s := _LOSS_SHAPES.search(ln.text))), None)
    cut = found is None
    if found is None:
        at = next((i for i, ln in enumerate(after) if _BROADCAST.search(ln.text)), None)
        if at is None or any(_FRAME.search(ln.text) for ln in after[at + 1 :]):
            return None
    said = found or "a traceback cut in broadcast_tensors"
    return [
        row.event(
            hit,
            f"DeepSpeed's pipeline computed the loss on the last stage with outputs and labels of different "
            f"shapes ({said}): the activations that came through the stages and the labels the last stage "
            "loaded belong to different micro-batches (samples of varying shapes, or data iterators out of "
            "step)",
            {"problem": "pipeline_loss_shape_mismatch", "framework": "deepspeed", "check": said[:120]},
            tier=1 if cut else None,
            dedupe=(row.code, "pipeline_shapes"),
        )
    ]


SIGNATURES = (
    Signature(
        "pipeline last stage loss of another shape",
        _PIPE_LOSS,
        _pipe_loss,
        C.PIPELINE_SHAPE_MISMATCH.code,
        anchors=(b"self.module.loss_fn(outputs, labels",),
        words=("loss_fn(outputs, labels",),
    ),
    Signature(
        "pipeline stage outputs and gradients do not pair",
        _STAGE_GRADS,
        _stage_grads,
        C.PIPELINE_SHAPE_MISMATCH.code,
        anchors=(
            b"assert len(output_val) == len(grad_val)",
            b"assert set(output_val.keys()) == set(grad_val.keys())",
            b"grad_value expected to have type",
            b"Expected Tensor or None gradient but got",
        ),
        words=("output_val", "grad_value expected", "tensor or none gradient"),
    ),
    Signature(
        "pipeline stage backward report with shapes that differ",
        _STAGE_BWD,
        _stage_bwd,
        C.PIPELINE_SHAPE_MISMATCH.code,
        anchors=(b"ailed to run stage backward",),
        words=("to run stage backward",),
    ),
    Signature(
        "pipeline stage metadata check",
        _PP_META,
        _pp_meta,
        C.PIPELINE_SHAPE_MISMATCH.code,
        anchors=(b"mismatch: expected", b"does not match expected number"),
        words=("mismatch: expected", "does not match expected number"),
    ),
    Signature(
        "pipeline stage gradient of another shape",
        _GRAD_SHAPE,
        _grad_shape,
        C.PIPELINE_SHAPE_MISMATCH.code,
        anchors=(b"Mismatch in shape: grad_output",),
        words=("mismatch in shape: grad_output",),
    ),
    Signature(
        "ddp rebuilt parameter indices",
        _REBUILT,
        _rebuilt,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"rebuilt param", b"rebuilt_param_indices_"),
        worth=(rb"rebuilt param", rb"rebuilt_param_indices_"),
    ),
    Signature(
        "tensorflow collective group disagrees",
        _TF_GROUP,
        _tf_group,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"is joining a group with",),
        worth=(rb"is joining a group with",),
    ),
    Signature(
        "tensorflow collective group disagrees (1.x-2.3 wording)",
        _TF_GROUP_OLD,
        _tf_group_old,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"but that group has size", b"but that group has type", b"but that group doesn't contain"),
    ),
    Signature(
        "tensorflow collective instance shapes differ",
        _TF_SHAPE,
        _tf_shape,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Shape mismatch in the collective instance",),
        worth=(rb"Shape mismatch in the collective instance",),
    ),
)

parse = gated_reader(SIGNATURES)

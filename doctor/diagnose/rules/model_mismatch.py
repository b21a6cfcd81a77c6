"""collective_mismatch read from one rank's error: DDP's bucket rebuild finding another rank's parameter
order (torch/csrc/distributed/c10d/reducer.cpp) and TensorFlow's collective group resolution finding members
that formed the group differently (core/common_runtime/collective_param_resolver_local.cc)."""

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


SIGNATURES = (
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
        "tensorflow collective instance shapes differ",
        _TF_SHAPE,
        _tf_shape,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Shape mismatch in the collective instance",),
        worth=(rb"Shape mismatch in the collective instance",),
    ),
)

parse = gated_reader(SIGNATURES)

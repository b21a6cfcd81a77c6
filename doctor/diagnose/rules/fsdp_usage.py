"""FSDP's own checks of how it was set up (RUN301, c10d invalid usage): the module, its devices or its
process groups do not fit what FullyShardedDataParallel needs, raised on every rank before or at the
first forward, so the job stops with this line and no communication failure behind it.

Formats (torch/distributed/fsdp/_init_utils.py, _runtime_utils.py, _flat_param.py, 2.0-2.7; 1.12-1.13
raised the device ones from fully_sharded_data_parallel.py with the same words):
"RuntimeError: An FSDP-managed module unexpectedly has parameters on cpu. Make sure to move the module to
cuda:0 before training.", "... with parameter CPU offloading enabled has parameters on cuda:0. Make sure
to not move the module from CPU when offloading parameters.", "ValueError: Inconsistent compute device and
`device_id` on rank 1: cuda:0 vs cuda:1", "RuntimeError: FSDP only supports single device modules but got
params on {...}", "FSDP does not support modules with different device types but got params on cuda and
cpu", "FSDP does not support changing parameters between forward and backward for FULL_SHARD", and the
hybrid-shard group checks ("Manual wrapping with ShardingStrategy.HYBRID_SHARD requires explicit
specification of process group or device_mesh.", "Cannot pass both process_group and device_mesh"), and
_flat_param.py / _state_dict_utils.py's ("Must flatten tensors with uniform `requires_grad` when
`use_orig_params=False`", "Must flatten tensors on the same device but got both cuda:0 and cpu", "All FSDP
modules should have the same state_dict_type.").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

_CHECKS = lazy_re.compile(
    r"(?P<device>An FSDP-managed module (?:with parameter CPU offloading enabled )?(?:unexpectedly )?has "
    r"parameters on \S+?\.|"
    # (retyped in a thread's prose the quotes around device_id change: "inconsistent compute device
    # and'device_id ' on rank 3: cuda:0 vs cuda:3")
    r"[Ii]nconsistent compute device and\s?[`'\"\u2018\u2019]?\s?device_id\s?[`'\"\u2018\u2019]?\s?"
    r"on rank \d+|"
    r"FSDP only supports "
    r"single device modules|FSDP does not support modules with different device types)"
    r"|(?P<params>FSDP does not support changing parameters between forward and backward)"
    # _flat_param.py / _state_dict_utils.py / _optim_utils.py (1.13-2.13): parameters flattened together that
    # differ in requires_grad or device, wrapped modules configured with different state-dict types
    r"|(?P<flat>Must flatten tensors (?:with uniform `requires_grad`|on the same device)|"
    r"All FSDP modules (?:should|must) have the same (?:state_dict_type|type of (?:optim_)?state_dict_config|"
    r"state dict settings)|Not all FSDP modules have the same _use_orig_params)"
    r"|(?P<group>Manual wrapping with \S*HYBRID_SHARD\S*.{0,8}requires explicit specification of process "
    r"group|Cannot pass both process_group and device_mesh)"
)
# The traceback quotes the raising line itself ('raise RuntimeError(', 'f"FSDP only supports ...'): the
# exception line below it is the one that counts.
_SOURCE_LINE = lazy_re.compile(r"^\s*(?:raise\s|f?[\"'])")
_WHAT = {
    "device": "the module's parameters are not on the device FSDP computes on (move the model to its "
    "local GPU, or pass device_id=local_rank, before wrapping)",
    "params": "parameters were replaced between forward and backward, which a sharded flat parameter "
    "cannot follow",
    "flat": "parameters FSDP flattens together differ in requires_grad or device, or its wrapped modules "
    "differ in state-dict settings (set use_orig_params=True, or wrap frozen and trainable parameters "
    "apart; one state_dict_type for the whole model)",
    "group": "a hybrid sharding strategy was given no (or two) process group specifications",
}


def _check(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if _SOURCE_LINE.search(hit.text):
        return None
    kind = m.lastgroup or "device"
    t = hit.text.strip()
    return [
        row.event(
            hit,
            f"{hit.who()}: FSDP rejected its setup: {_WHAT[kind]} ({clip(t[t.find(m.group(0)) :], 160)})",
            {"fsdp_check": m.group(0)[:120], "usage_check": f"fsdp_{kind}"},
            dedupe=(row.code, hit.rank, "fsdp", kind),
        )
    ]


SIGNATURES = (
    Signature(
        "fsdp setup check",
        _CHECKS,
        _check,
        C.C10D_INVALID_USAGE.code,
        # (FSDP's device check by its own words too: a title quotes it without the exception before it)
        anchors=(b"rror", b"An FSDP-managed module", b"nconsistent compute device and"),
        worth=(rb"Error\b", rb"An FSDP-managed module", rb"nconsistent compute device and"),
        words=("fsdp", "device_id", "hybrid_shard", "device_mesh", "must flatten tensors"),
        anchor_from="the exception type ('RuntimeError: ', 'ValueError: ') before torch's message",
        examples=(
            "RuntimeError: An FSDP-managed module unexpectedly has parameters on cpu. Make sure to move the "
            "module to cuda:0 before training.",
            "ValueError: Inconsistent compute device and `device_id` on rank 1: cuda:0 vs cuda:1",
            "fsdp/_init_utils.py,line889 inconsistent compute device and'device_id ' on rank 3: cuda:0 vs "
            "cuda:3",
        ),
    ),
)
parse = gated_reader(SIGNATURES)

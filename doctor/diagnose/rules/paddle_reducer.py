"""collective_mismatch in PaddlePaddle's DataParallel: its reducer's errors, the counterparts of torch DDP's
"Expected to have finished reduction in the prior iteration" and "marked as ready twice" (mismatch.py).

Read at their source, paddle/fluid/imperative/reducer.cc (dygraph DataParallel, 2.0-2.4) and paddle/fluid/
distributed/collective/reducer.cc (EagerReducer, 2.3+), raised as PreconditionNotMet ("RuntimeError:
(PreconditionNotMet) ..." in Python, "PreconditionNotMetError: ..." in the C++ trace):
- Reducer::PrepareForBackward when the previous iteration's reduction never finished (a parameter got no
  gradient, so its bucket's allreduce was never launched: the ranks' reductions drift apart and hang):
  2.0 "Please note that all ``forward`` outputs derived from the module parameters must participate in the
  calculation of losses and subsequent gradient calculations. If not, the wrapper will hang, waiting for
  autograd to generate gradients for these parameters. you can use detach or stop_gradient to make the
  unused parameters detached from the autograd graph."; 2.1+ "A serious error has occurred here. Please set
  find_unused_parameters=True to traverse backward graph in each step to prepare reduce in advance. If you
  have set, There may be several reasons for this error: 1) Please note that all forward outputs derived
  from the module parameters must participate in the calculation of losses ... 2) Used multiple forwards
  and one backward. You may be able to wrap multiple forwards in a model."
- Reducer::MarkVarReady when a parameter's gradient arrives twice in one backward pass: "Error happened,
  when parameter[12][linear_0.w_0] has been ready before. Please set find_unused_parameters=True to
  traverse backward graph in each step to prepare reduce in advance. If you have set, there may be several
  reasons for this error: 1) In multiple reentrant backward phase, some parameters are reused.2) Using model
  parameters outside of forward function. ..." (recompute / reentrant checkpointing, shared weights).
A paste cut to the shared sentence ("Please set find_unused_parameters=True to traverse backward graph ...")
is the ready-twice error when the reentrant reasons follow it, else the unfinished reduction.

Near misses that stay silent: the EagerReducer's warnings "All parameters are involved in the backward
pass. It is recommended to set find_unused_parameters to False to improve performance." and "There is no
parameter in the device involved in the backward calculation. If there are parameters on other devices
involved in the backward, then a serious error will occur here." (a hint, not the failure).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_TWICE = lazy_re.compile(r"Error happened, when parameter\[(\d+)\]\s*\[([^\]]*)\] has been ready before")
_SHARED = "to traverse backward graph in each step to prepare reduce in advance"
_UNFINISHED = lazy_re.compile(
    r"A serious error has occurred here\. Please set find_unused_parameters|"
    r"derived from the module parameters must participate in the calculation of losses|"
    r"Please set find_unused_parameters=True " + _SHARED
)
_REENTRANT = lazy_re.compile(r"has been ready before|In multiple reentrant backward phase")


def _twice(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"framework": "paddle", "param_index": int(m.group(1))}
    if m.group(2).strip():
        facts["param"] = m.group(2).strip()
    name = facts.get("param") or f"index {facts['param_index']}"
    return [
        row.event(
            hit,
            f"Paddle DataParallel: the gradient of parameter {name} arrived twice in one backward pass "
            "(recompute / reentrant checkpointing, a parameter shared between modules or used outside "
            "forward)",
            facts,
            dedupe=(row.code, "paddle"),
        )
    ]


def _unfinished(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not m.group(0).startswith(("A serious", "derived")):
        # the shared sentence alone: the reasons that follow it say which of the two errors it is
        text = " ".join([hit.text] + [ln.text for ln in hit.after(3)])
        if _REENTRANT.search(text):
            return [
                row.event(
                    hit,
                    "Paddle DataParallel: a parameter's gradient arrived twice in one backward pass "
                    "(recompute / reentrant checkpointing, a shared parameter)",
                    {"framework": "paddle"},
                    code=C.DDP_READY_TWICE.code,
                    dedupe=(C.DDP_READY_TWICE.code, "paddle"),
                )
            ]
    return [
        row.event(
            hit,
            "Paddle DataParallel: the previous iteration's gradient reduction never finished - some "
            "parameters got no gradient (outputs that do not reach the loss, several forwards for one "
            "backward): set find_unused_parameters=True or detach the unused outputs",
            {"framework": "paddle"},
            dedupe=(row.code, "paddle"),
        )
    ]


SIGNATURES = (
    Signature(
        "paddle reducer ready twice",
        _TWICE,
        _twice,
        C.DDP_READY_TWICE.code,
        anchors=(b"has been ready before",),
        worth=(rb"has been ready before",),
        words=("has been ready before",),
        examples=(
            "RuntimeError: (PreconditionNotMet) Error happened, when parameter[12][linear_0.w_0] has been "
            "ready before. Please set find_unused_parameters=True to traverse backward graph in each step to "
            "prepare reduce in advance.",
        ),
    ),
    Signature(
        "paddle reducer unfinished reduction",
        _UNFINISHED,
        _unfinished,
        C.DDP_UNFINISHED_REDUCTION.code,
        anchors=(b"Please set find_unused_parameters", b"participate in the calculation of losses"),
        worth=(rb"Please set find_unused_parameters", rb"participate in the calculation of losses"),
        words=("please set find_unused_parameters", "participate in the calculation of losses"),
        examples=(
            "RuntimeError: (PreconditionNotMet) A serious error has occurred here. Please set "
            "find_unused_parameters=True to traverse backward graph in each step to prepare reduce in "
            "advance.",
        ),
    ),
)

parse = gated_reader(SIGNATURES)

"""Horovod's shutdown error, read by rules/mismatch.py's "horovod shutdown" row (kept apart so that
module stays under the line limit): a rank left the loop while the others still called collectives, or one
raised.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature
from pgdoctor.model import lazy_re

# Horovod's shutdown (horovod/common/operations.cc SHUT_DOWN_ERROR, raised as HorovodInternalError or a
# TF op error in every rank that calls a collective afterwards): "Horovod has been shut down. This was
# caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor
# after one of the ranks finished execution." (before 0.16: "This has been caused by an exception on one
# of the rank or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks has
# finished execution."). Tier 1: a rank's own exception, when shown, is the cause; without one, a rank
# left the loop (uneven data, early stopping) while the others still issued collectives.
HVD_SHUTDOWN = lazy_re.compile(
    r"Horovod has been shut down\. This (?:was|has been) caused by an exception on one"
)


# horovod.torch's start-of-training broadcasts (horovod/torch/__init__.py 0.13-0.19, functions.py 0.20+):
# the root's parameters and optimizer state sent to every rank before the first step. No rank can have
# finished its loop before them: a shutdown raised there is another rank's exception (not in the paste), no
# mismatch of the ranks' collectives. The row owns the line and says nothing.
_HVD_START_BROADCAST = lazy_re.compile(
    r'horovod[\\/]torch[\\/](?:__init__|functions)\.py", line \d+, in '
    r"(?:broadcast_parameters|broadcast_optimizer_state)\b"
)


def hvd_shutdown(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    """rules/mismatch.py's "horovod shutdown" row (RUN201, tier 1 there)."""
    if any(_HVD_START_BROADCAST.search(ln.text) for ln in hit.before(16)):
        return []
    return [
        row.event(
            hit,
            "Horovod shut down: a rank raised an exception, or one rank finished (uneven data, early "
            "stopping) while the others still called collectives",
            {"kind": "horovod_shutdown", "framework": "horovod"},
            dedupe=(row.code, "horovod_shutdown"),
        )
    ]

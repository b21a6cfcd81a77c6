"""Codes of what a job's logs say about the whole run rather than one failure: a job that made no
progress until Slurm cancelled it (RUN370), and NCCL carrying a multi-node job's inter-node
traffic over TCP sockets (NET117). Emitted by pgdoctor.diagnose.rules.stalled_cancel and
pgdoctor.diagnose.transport.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

STALLED_UNTIL_CANCEL = register_code(
    "RUN370",
    "hung-until-slurm-cancel",
    "fail",
    "collective_timeout",
    "The job made no progress for a long time before Slurm cancelled it: it was hung",
    "run",
)
NCCL_SOCKET_FALLBACK = register_code(
    "NET117",
    "nccl-socket-transport-multinode",
    "warn",
    "performance",
    "NCCL carries a multi-node job's inter-node traffic over TCP sockets instead of InfiniBand/RoCE",
    "net",
)

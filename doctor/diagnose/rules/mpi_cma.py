"""mpi_cma: Open MPI's single-copy shared memory between the ranks of a node refused by the kernel (RUN368).

Formats, read at the source: Open MPI's btl/vader (opal/mca/btl/vader/btl_vader_get.c and btl_vader_put.c,
2.x-4.x; btl/sm with smsc/cma in 5.x says the same) copies a large message with process_vm_readv /
process_vm_writev and, when the call moves fewer bytes, prints "Read -1, expected 36864, errno = 1" (get) or
"Wrote -1, expected 36864, errno = 1" (put) with opal_output, behind mpirun's tag ("[1,1]<stderr>:[host:00026]
Read -1, ..."). errno 1 (EPERM) is the container: no CAP_SYS_PTRACE, or /proc/sys/kernel/yama/ptrace_scope
forbidding it (Docker's default seccomp profile); Horovod and mpi4py jobs in Docker stop at their first
intra-node broadcast or allreduce. Other errno values (14 EFAULT, 3 ESRCH) are the same mechanism failing.
vader's help text when it detects the restriction up front ("CMA support is not available due to restrictive
ptrace settings") is a warning: it falls back to copy-in/copy-out and goes on (silent here).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_CMA = lazy_re.compile(
    r"\b(?P<op>Read|Wrote) (?P<got>-?\d+), expected (?P<want>\d+), errno = (?P<errno>\d+)\b"
)
_ERRNO = {1: "EPERM: ptrace not permitted", 3: "ESRCH: the peer process is gone", 14: "EFAULT: bad address"}


def _cma(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    errno = int(m.group("errno"))
    why = _ERRNO.get(errno, f"errno {errno}")
    return [
        row.event(
            hit,
            f"{hit.who()}: Open MPI's shared-memory single copy between ranks of this node failed "
            f"({m.group('op')} {m.group('got')} of {m.group('want')} bytes, {why}): in a container without "
            "SYS_PTRACE; run with --mca btl_vader_single_copy_mechanism none (OMPI_MCA_btl_vader_single_copy_"
            "mechanism=none) or docker run --cap-add=SYS_PTRACE",
            {"errno": errno, "bytes": int(m.group("want")), "mechanism": "cma"},
            dedupe=(row.code,),
        )
    ]


SIGNATURES = (
    Signature(
        "open mpi cma copy refused",
        _CMA,
        _cma,
        C.MPI_CMA_NOT_PERMITTED.code,
        anchors=(b", errno = ",),
        worth=(rb"(?:Read|Wrote) -?\d+, expected \d+, errno = ",),
        words=(", errno = ",),
    ),
)
parse = gated_reader(SIGNATURES)

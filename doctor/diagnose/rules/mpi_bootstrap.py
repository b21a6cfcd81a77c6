"""rendezvous under MPI: MPI_Init could not make its world because the process manager's key-value
exchange (PMI / PMI2 / PMIx, the MPI launcher's rendezvous store) failed.

Formats: MPICH and its derivatives (Intel MPI, MVAPICH) print the error stack of the failed init, one
record per function, the last one saying which PMI call failed: "Abort(3712399) on node 0 (rank 0 in comm 0):
Fatal error in PMPI_Init: Other MPI error, error stack: ... MPIR_pmi_kvs_get(227).......: PMI_KVS_Get
returned -1" (4.x), "pmi1_barrier(120)...................: PMI_Barrier returned -1" (4.1+, under
"Fatal error in internal_Init_thread"); Open MPI's PMIx client with no server to talk to (a rank started
without mpirun, or srun without --mpi=pmix): "OPAL ERROR: Unreachable in file pmix3x_client.c at line 112"
then "*** An error occurred in MPI_Init", and "PMIX ERROR: UNREACHABLE in file ...". An MPI_Init failure
whose stack names another layer (the fabric's provider, a kernel module) is not this family.
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_PMI = lazy_re.compile(
    r"(?P<call>PMI2?_\w+|PMIx_\w+) (?:returned|failed)\b[^\n]*|"
    r"(?:OPAL|PMIX) ERROR: (?:Unreachable|UNREACHABLE) in file (?P<file>\S*pmix\S*)"
)
# The init that failed, in the stack's first record or Open MPI's banner.
_INIT = lazy_re.compile(r"\b(?:P?MPI_Init\w*|internal_Init_thread|MPIR_Init_thread|MPI_INIT)\b")


def _pmi(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    near = [*hit.before(16, same_rank=False), hit.line, *hit.after(6, same_rank=False)]
    if not any(_INIT.search(ln.text) for ln in near):
        return None  # a PMI call of a running job (a spawn, a finalize) is not the init's rendezvous
    what = m.group("call") or "the PMIx client"
    return [
        row.event(
            hit,
            f"MPI_Init failed in its process manager's key-value exchange ({what}): the ranks could not "
            "share their addresses, so they were started without the MPI launcher's process manager "
            "(mpirun/mpiexec, or srun with the --mpi plugin this MPI library expects) or it could not reach "
            "the other nodes",
            {"problem": "mpi_pmi", "pmi_call": what},
            dedupe=(row.code, "pmi"),
        )
    ]


SIGNATURES = (
    Signature(
        "mpi init process-manager exchange",
        _PMI,
        _pmi,
        C.STORE_UNREACHABLE.code,
        anchors=(b"PMI", b"pmix"),
        worth=(rb"PMI2?_\w+ (?:returned|failed)", rb"PMIx_\w+ (?:returned|failed)", rb"ERROR: Unreachable"),
        words=("pmi",),
    ),
)
parse = gated_reader(SIGNATURES)

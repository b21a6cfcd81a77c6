"""Flight-recorder codes beyond RUN281-RUN283 (which live in checks/codes/run.py): one code per
kind of disagreement between ranks' dumps, so that the title says which kind it is. Emitted by
pgdoctor.diagnose.flight."""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

FR_SIZE_MISMATCH = register_code(
    "RUN284",
    "fr-collective-size-mismatch",
    "fail",
    "collective_mismatch",
    "Flight recorder: ranks entered the same collective with sizes that cannot agree",
    AREA,
)
FR_DTYPE_MISMATCH = register_code(
    "RUN285",
    "fr-collective-dtype-mismatch",
    "fail",
    "collective_mismatch",
    "Flight recorder: ranks entered the same collective with different dtypes",
    AREA,
)
FR_NOT_STARTED = register_code(
    "RUN286",
    "fr-collective-not-started",
    "fail",
    "collective_timeout",
    "Flight recorder: a rank scheduled a collective its peers started, and never started it",
    AREA,
)
FR_P2P_UNMATCHED = register_code(
    "RUN287",
    "fr-p2p-unmatched",
    "fail",
    "collective_timeout",
    "Flight recorder: a send or recv whose peer never posted the matching operation",
    AREA,
)
FR_P2P_SIZE_MISMATCH = register_code(
    "RUN288",
    "fr-p2p-size-mismatch",
    "fail",
    "collective_mismatch",
    "Flight recorder: a send and its matching recv disagree on size or dtype",
    AREA,
)
FR_COALESCED_MISMATCH = register_code(
    "RUN289",
    "fr-coalesced-mismatch",
    "fail",
    "collective_mismatch",
    "Flight recorder: ranks disagree inside a coalesced group of collectives",
    AREA,
)
FR_DUMP_MISSING = register_code(
    "RUN290",
    "fr-dump-missing",
    "fail",
    "process_crash",
    "Flight recorder: a member rank left no dump (it died or aborted before dumping)",
    AREA,
)

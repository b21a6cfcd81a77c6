"""Intel oneCCL (torch-ccl / oneccl_bindings_for_pytorch, the `ccl` and `xccl` backends on Intel XPU and CPU,
DeepSpeed and vLLM on XPU): its transport layer (ATL over libfabric/OFI) found no fabric provider to run on.

Formats (oneCCL src/atl/ofi/atl_ofi_helper.cpp and atl_ofi.cpp, 2021.x): one `|CCL_ERROR|` record per
function behind oneCCL's own "2024:08:21-10:41:21:( 8320)" stamp: "atl_ofi_get_prov_list: fi_getinfo error:
ret -61, providers 0", "can't create providers for name shm", "atl_ofi_open_nw_provs: can not open network
providers", "init: can't find suitable provider", then "init_transport: condition transport->init(...) ==
ATL_STATUS_SUCCESS failed" / "failed to initialize ATL". libfabric returned no provider for the hints
(FI_PROVIDER names one that is not installed, FI_PROVIDER_PATH points nowhere, or the fabric's provider
library is missing): the same class as NCCL's network plugin without a provider (RUN294). Healthy runs print
`|CCL_WARN|` lines ("did not find MPI-launcher specific variables, switch to ATL/OFI", "could not get
local_idx/count from environment variables"), which are notes, never failures.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_PROVIDER = lazy_re.compile(
    r"\|CCL_(?:ERROR|FATAL)\|.*?(?P<what>can't find suitable provider|can not open network providers|"
    r"fi_getinfo error: ret (?P<ret>-?\d+)|can't create providers for name (?P<prov>\w+))"
)
_NAMED = lazy_re.compile(r"can't create providers for name (\w+)")


def _provider(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"problem": "ofi_provider_missing", "library": "oneCCL"}
    for ln in [*hit.before(4, same_rank=False), hit.line, *hit.after(6, same_rank=False)]:
        p = _NAMED.search(ln.text)
        if p:
            facts["provider"] = p.group(1)
            break
    if m.group("ret"):
        facts["fi_errno"] = int(m.group("ret"))
    named = f" ({facts['provider']})" if "provider" in facts else ""
    return [
        row.event(
            hit,
            f"oneCCL's transport found no libfabric provider{named}: FI_PROVIDER names one that is not "
            "installed, FI_PROVIDER_PATH points nowhere, or the fabric's provider library is missing",
            facts,
            dedupe=(row.code, "oneccl_provider"),
        )
    ]


SIGNATURES = (
    Signature(
        "oneccl ofi provider missing",
        _PROVIDER,
        _provider,
        C.NCCL_NET_PROVIDER_MISSING.code,
        anchors=(b"|CCL_ERROR|", b"|CCL_FATAL|"),
        worth=(rb"\|CCL_(?:ERROR|FATAL)\|",),
        words=("|ccl_error|", "|ccl_fatal|"),
    ),
)
parse = gated_reader(SIGNATURES)

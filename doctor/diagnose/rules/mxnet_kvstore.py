"""MXNet's key-value store (the layer its data-parallel training reduces gradients through) asked for a kind
that the installed libmxnet was not compiled with.

Formats (src/kvstore/kvstore.cc KVStore::Create, MXNet 0.5-1.9): `LOG(FATAL) << "compile with
USE_DIST_KVSTORE=1 to use " << tname` for every "dist*" kind (dist_sync, dist_async, dist_device_sync,
dist_sync_device; the 2015 code printed it for "dist" alone) and "compile with USE_NCCL=1 to use nccl" for
the "nccl" kind (1.0+), raised to Python as "mxnet.base.MXNetError: [13:07:50] src/kvstore/kvstore.cc:37:
compile with ..." (glog's "[13:07:50] .../dmlc/logging.h:300: " before it in the C++ log, a `Stack trace
returned N entries:` / `[bt] (0) ...libmxnet.so` trace after it). The library on the import path lacks the
distributed kvstore (ps-lite) or NCCL: a pip wheel without them, or a rebuilt libmxnet.so that the Python
package does not load (the package installed earlier still holds the old one). A missing part of the build,
as torch's "Distributed package doesn't have NCCL built in" (RUN263).
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_NOT_COMPILED = lazy_re.compile(r"compile with (?P<flag>USE_DIST_KVSTORE|USE_NCCL)=1 to use ?(?P<kind>\w*)")


def _not_compiled(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    flag, kind = m.group("flag"), m.group("kind") or ("dist" if "DIST" in m.group("flag") else "nccl")
    part = "the distributed kvstore (ps-lite)" if flag == "USE_DIST_KVSTORE" else "NCCL"
    return [
        row.event(
            hit,
            f"the libmxnet.so this process loaded was built without {part} ({flag}=0), so kvstore "
            f"'{kind}' cannot be created: install a build with it, or reinstall the Python package "
            "after rebuilding so that it loads the new library",
            {
                "problem": "framework_without_backend",
                "framework": "mxnet",
                "kvstore": kind,
                "build_flag": flag,
            },
            dedupe=(row.code, "mxnet_kvstore"),
        )
    ]


SIGNATURES = (
    Signature(
        "mxnet kvstore not compiled in",
        _NOT_COMPILED,
        _not_compiled,
        C.LIBRARY_MISSING.code,
        anchors=(b"=1 to use",),
        worth=(rb"=1 to use",),
        words=("=1 to use",),
    ),
)
parse = gated_reader(SIGNATURES)

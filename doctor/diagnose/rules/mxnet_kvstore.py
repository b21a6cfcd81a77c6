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

ps-lite's KVWorker::Pull_ callback (include/ps/kv_app.h, every fork: MXNet's 3rdparty/ps-lite, BytePS)
checks the servers' answer against the caller's buffers: `CHECK_EQ(vals->size(), total_val)` and
`CHECK_EQ(lens->size(), keys.size())`, printed by glog as "terminate called after throwing an instance of
'dmlc::Error' / what(): [05:33:59] /work/mxnet/3rdparty/ps-lite/include/ps/kv_app.h:587: Check failed:
lens->size() == keys.size() (2 vs. 1)". The keys, values or lengths the program (or the kvstore code above
ps-lite) passed disagree with what the servers hold (RUN345). Its third check there, "total_key ==
keys.size() ... lost some servers?", is a lost server and is not read here.

A kvstore used out of its contract (RUN357): ps-lite's Postoffice refuses a second customer with an id it
already holds (src/postoffice.cc AddCustomer: MXNet 0.9-1.x's ps-lite "Check failed: (customers_.count(id))
== ((size_t)0) id 0 already exists", the 2018+ ps-lite and BytePS "Check failed:
(customers_[app_id].count(customer_id)) == ((size_t) 0) customer_id 0 already exists"): a second
mx.kvstore.create('dist_*') in one process. A server asked for a key nobody initialised (MXNet's
src/kvstore/kvstore_dist_server.h "Check failed: !stored.is_none() init 3 first", BytePS
byteps/server/server.cc "Check failed: updates.merged.tensor init 10551296 first" / "Check failed:
stored->tensor init 7 first"): a push or pull before kv.init of that key (or on a worker whose keys differ).

A node that never joined the parameter server's group (RUN224, rendezvous): ps-lite's Van guards Send() and
my_node() with `CHECK(ready_) << "call Start() first"` (include/ps/internal/van.h, every fork), printed by
dmlc's logging as "[13:04:31] ./ps-lite/include/ps/internal/van.h:56: Check failed: ready_ call Start() first"
(newer dmlc-core "Check failed: ready_: call Start() first"; forks that hold an atomic, "ready_.load()").
kvstore.rank / kv.push reached the van of a process whose Postoffice was never started: the process was not
started with the roles and addresses the tracker gives (DMLC_ROLE, DMLC_PS_ROOT_URI / PORT, DMLC_NUM_SERVER /
WORKER: a launcher that sets them for some roles only, a 'dist_*' kvstore made in a process launched by hand),
so it never registered with the scheduler.
"""

from __future__ import annotations

import re
from typing import Any, Optional

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


_PULL_MISMATCH = lazy_re.compile(
    r"kv_app\.h:(?P<line>\d+)\]?:? Check failed: "
    r"(?P<check>(?:lens|vals)->size\(\) == (?:keys\.size\(\)|total_val))"
    r"(?: \((?P<got>\d+) vs\. (?P<want>\d+)\))?"
)


def _pull_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {
        "framework": "ps-lite",
        "check": m.group("check"),
        "source_line": int(m.group("line")),
    }
    sizes = ""
    if m.group("got"):
        facts["got"], facts["expected"] = int(m.group("got")), int(m.group("want"))
        sizes = f" ({m.group('got')} vs. {m.group('want')})"
    return [
        row.event(
            hit,
            f"ps-lite's KVWorker pull check failed: {m.group('check')}{sizes}: the keys, values or lengths "
            "passed to push/pull disagree with what the servers hold",
            facts,
            dedupe=(row.code, "ps_lite_pull"),
        )
    ]


_MISUSE = lazy_re.compile(
    r"Check failed: \(?customers_(?:\[app_id\])?\.count\((?:customer_)?id\)\)? ?== ?\(?\(?size_t\)\s*0\)?\s*"
    r"(?:customer_)?id (?P<id>\d+) already exists|"
    r"Check failed: (?P<check>!stored\.is_none\(\)|updates\.merged\.tensor|stored->tensor) "
    r"init (?P<key>\d+) first"
)


def _misuse(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group("id") is not None:
        facts: dict[str, Any] = {
            "framework": "ps-lite",
            "problem": "duplicate_customer",
            "id": int(m.group("id")),
        }
        msg = (
            f"ps-lite refused a second kvstore customer with id {m.group('id')}: the process created a "
            "distributed kvstore twice (one dist_* kvstore per process; reuse the first)"
        )
    else:
        facts = {"framework": "ps-lite", "problem": "key_not_initialised", "key": int(m.group("key"))}
        msg = (
            f"the kvstore server got a push or pull of key {m.group('key')} that was never initialised "
            f"({m.group('check')}): call kv.init on every key first, with the same keys on every worker"
        )
    return [row.event(hit, msg, facts, dedupe=(row.code, "kvstore_misuse"))]


_VAN_NOT_STARTED = lazy_re.compile(r"Check failed: \(?ready_(?:\.load\(\))?\)?:? call Start\(\) first")


def _van_not_started(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "ps-lite's van was used before it started (Check failed: ready_ call Start() first): this "
            "process never joined the parameter-server group; start every role (scheduler, servers, "
            "workers) through the launcher/tracker so that DMLC_ROLE, DMLC_PS_ROOT_URI/PORT and "
            "DMLC_NUM_SERVER/WORKER are set",
            {"framework": "ps-lite", "problem": "van_not_started"},
            dedupe=(row.code, "ps_lite_van"),
        )
    ]


SIGNATURES = (
    Signature(
        "ps-lite van used before start",
        _VAN_NOT_STARTED,
        _van_not_started,
        C.RENDEZVOUS_CONFIG.code,
        anchors=(b"call Start() first",),
        worth=(rb"ready_\S*:? call Start\(\) first",),
        words=("call start() first",),
    ),
    Signature(
        "ps-lite kvstore misuse",
        _MISUSE,
        _misuse,
        C.KVSTORE_MISUSE.code,
        anchors=(b"already exists", b" first"),
        worth=(rb"id \d+ already exists", rb"init \d+ first"),
        words=("already exists", " first"),
    ),
    Signature(
        "ps-lite pull size mismatch",
        _PULL_MISMATCH,
        _pull_mismatch,
        C.KVSTORE_PULL_MISMATCH.code,
        anchors=(b"kv_app.h",),
        words=("kv_app.h",),
    ),
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

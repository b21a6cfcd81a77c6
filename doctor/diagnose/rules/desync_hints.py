"""Lines that show the ranks diverged without an error of their own: a traceback cut before its exception
line whose last frame is a cross-rank consistency check (the check is what failed, so its family is the
finding even though its message is missing), and FSDP's warning that a rank's all-gather order changed.

Formats: DistributedDataParallel's constructor verifies that every rank holds the same parameters before
the first broadcast: torch 1.9-1.10 `dist._verify_model_across_ranks(self.process_group, parameters)`
(torch/nn/parallel/distributed.py), 1.11 `dist._verify_params_across_processes(...)`, 1.12+
`_verify_param_shape_across_processes(self.process_group, parameters)` (torch/distributed/utils.py, called
from distributed.py's __init__). A Python traceback's frame: '  File ".../torch/distributed/utils.py", line
288, in _verify_param_shape_across_processes' (a rank prefix may stand before it, indentation stripped). Its
exceptions, when shown, are read by their own rows ("DDP expects same model across all ranks", "appears not
to match sizes of the same param in process 0", or an NCCL error of DDP's first collective): this row
answers only when no exception line follows the frame. faulthandler's and py-spy's dumps of a hung rank
(no ", in " / a "(file:line)" tail) are not tracebacks and are not read here.
FSDP's execution-order check (torch/distributed/fsdp/_exec_order_utils.py, 1.12-2.x, with
TORCH_DISTRIBUTED_DEBUG=INFO or DETAIL): warnings.warn("Forward order differs from that of the first iteration
on rank 1. Collectives are unchecked and may give incorrect results or hang.\nExpected to all-gather for
['a.weight'] but trying to all-gather parameters for ['b.weight']") (or "Expected no more parameters in the
forward but trying to all-gather parameters for ..."): this rank all-gathers in another order than the
others, so the all-gathers pair up wrongly (wrong results) or one waits forever. DETAIL's hard check ("Forward
order differs across ranks: rank 0 is all-gathering ...") is `mismatch`'s.
Ascend HCCL's parameter check when two ranks set up a link for one collective (CANN error code
EI0005, 6.x-8.x; the HCCL user guide's "参数一致性校验"): "EI0005: <time> The arguments for collective
communication are inconsistent between ranks:tag[HcomAllReduce_66294..._0], parameter[count],
local[16512], remote [8320]" (the parameter is the tag, op type, count, data type or root). The
transport errors of its TraceBack ("Transport init error ... Create Dest error", EI0009) are this
check's consequence, so this row is a cause.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_DDP_VERIFY = lazy_re.compile(
    r"File \"[^\"]+\", line \d+, in (?P<fn>_verify_param_shape_across_processes|"
    r"_verify_params_across_processes|_verify_model_across_ranks)\s*$"
)
# An exception line, a C++ throw or a later frame of another function: the cut traceback goes on.
_GOES_ON = lazy_re.compile(
    r"^\s*(?:[\w.]*(?:Error|Exception|Interrupt|Exit)\b|terminate called|what\(\)|Exception raised from)"
)


def _ddp_verify(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if any(_GOES_ON.search(ln.text) for ln in hit.after(48)):
        return None
    facts: dict[str, Any] = {"kind": "ddp_param_verification", "frame": m.group("fn"), "cut": True}
    return [
        row.event(
            hit,
            f"{hit.who()}: DistributedDataParallel's check that every rank holds the same parameters "
            f"({m.group('fn')}) raised; the exception line is cut from the log, but this check fails when "
            "the ranks built different models (parameter count, shapes or order differ)",
            facts,
            tier=1,
            dedupe=(row.code, "ddp_verify"),
        )
    ]


_FSDP_ORDER = lazy_re.compile(
    r"Forward order differs from that of the first iteration on rank (?P<rank>\d+)\. "
    r"Collectives are unchecked"
)
_FSDP_WHAT = lazy_re.compile(
    r"(?:Expected to all-gather for (?P<want>\[.*?\])|Expected no more parameters in the forward) but trying "
    r"to all-gather parameters for (?P<got>.+)$"
)


def _fsdp_order(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    rank = int(m.group("rank"))
    facts: dict[str, Any] = {"kind": "fsdp_forward_order", "framework": "fsdp", "rank": rank}
    for ln in [hit.line, *hit.after(3)]:
        w = _FSDP_WHAT.search(ln.text)
        if w:
            if w.group("want"):
                facts["expected_params"] = w.group("want")[:200]
            facts["got_params"] = w.group("got").strip()[:200]
            break
    return [
        row.event(
            hit,
            f"FSDP: rank {rank} all-gathers its parameters in another order than in the first iteration "
            "(a data-dependent branch or a module skipped on some ranks): the ranks' all-gathers pair up "
            "wrongly or hang",
            facts,
            tier=1,
            rank=rank,
            dedupe=(row.code, "fsdp_order", rank),
        )
    ]


_HCCL_ARGS = lazy_re.compile(
    r"(?:\bEI0005\b.*?)?arguments for collective communication are inconsistent between ranks"
    r"(?::?\s*tag\s*\[(?P<tag>[^\]]*)\],?\s*parameter\s*\[(?P<param>[^\]]*)\],?"
    r"\s*local\s*\[(?P<local>[^\]]*)\],?\s*remote\s*\[(?P<remote>[^\]]*)\])?"
)


def _hccl_args(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "hccl_parameter_check", "backend": "hccl", "error_code": "EI0005"}
    if m.group("tag"):
        facts["tag"] = m.group("tag")
        op = re.match(r"[A-Za-z]+", m.group("tag"))
        if op:
            facts["op"] = op.group(0)
        facts.update(parameter=m.group("param"), local=m.group("local"), remote=m.group("remote"))
    what = (
        f": {facts['parameter']} is {facts['local']} here and {facts['remote']} on the peer"
        if m.group("tag")
        else ""
    )
    return [
        row.event(
            hit,
            f"{hit.who()}: HCCL found the ranks called {facts.get('op', 'a collective')} with different "
            f"arguments (EI0005){what}: the scripts or rank tables differ between NPUs",
            facts,
            dedupe=(row.code, "hccl_args"),
        )
    ]


# NCCL's per-call trace (NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=COLL, enqueue.cc / collectives.cc 2.3-2.27):
# "host:32615:32615 [0] NCCL INFO Broadcast: opCount 0 sendbuff 0x7f88e4000000 recvbuff 0x7f88e4000000 count
# 25503912 datatype 6 op 0 root 0 comm 0x7f88e005a260 [nranks=8] stream 0x55f20d2f5db0" (opCount in hex from
# 2.4; a grep over per-rank files puts "LOG1.0.txt:" before the host). The ranks of one communicator issue
# their n-th collective with the same operation, count, datatype and root; when the lines of one opCount
# from different processes disagree, the ranks called different collectives (or one with other sizes) at
# the same point: they wait for each other forever or exchange garbage. Send/Recv are left out (their count
# and peer differ by design), and so is an opCount that one process logged twice (two communicators of the
# same size: the lines cannot be paired). The trace prints a line per collective per rank, so the scanner
# stops only at a communicator's first collective ("opCount 0 ", once per communicator and rank, like its init
# summary), and the row compares every opCount that follows it in the window.
_NCCL_COLL = lazy_re.compile(
    r"(?P<host>[\w.-]+):(?P<pid>\d+):\d+ \[(?P<dev>\d+)\] NCCL INFO "
    r"(?P<op>AllReduce|Broadcast|Reduce|AllGather|ReduceScatter): opCount (?P<seq>[0-9a-fA-Fx]+) "
    r"sendbuff \S+ recvbuff \S+ count "
    r"(?P<count>\d+) datatype (?P<dt>\d+) op (?P<rop>\d+) root (?P<root>\d+) comm \S+ \[nranks=(?P<n>\d+)\]"
)

_NCCL_COLL_FIRST = lazy_re.compile(
    r"NCCL INFO (?:AllReduce|Broadcast|Reduce|AllGather|ReduceScatter): opCount 0 "
)


def _nccl_coll(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    by_seq: dict[tuple[str, str], dict[tuple[str, str, str], tuple[str, str, str, str]]] = {}
    twice: set[tuple[str, str]] = set()
    for ln in (*hit.before(24, same_rank=False), hit.line, *hit.after(48, same_rank=False)):
        c = _NCCL_COLL.search(ln.text)
        if not c:
            continue
        key = (c.group("seq"), c.group("n"))
        who = (c.group("host"), c.group("pid"), c.group("dev"))
        calls = by_seq.setdefault(key, {})
        if who in calls:
            twice.add(key)  # one process, two lines of this opCount: two communicators, not pairable
        calls[who] = (c.group("op"), c.group("count"), c.group("dt"), c.group("root"))
    odd_seq = next(
        (k for k, calls in by_seq.items() if k not in twice and len(set(calls.values())) > 1), None
    )
    if odd_seq is None:
        return None
    (seq, nranks), calls = odd_seq, by_seq[odd_seq]
    groups: dict[tuple[str, str, str, str], list[tuple[str, str, str]]] = {}
    for who, call in calls.items():
        groups.setdefault(call, []).append(who)
    if len(groups) < 2:
        return None
    ordered = sorted(groups.items(), key=lambda kv: len(kv[1]))
    said = "; ".join(
        f"{len(whos)} process(es) (device {', '.join(sorted({w[2] for w in whos}))}): {op} count {count} "
        f"datatype {dt} root {root}"
        for (op, count, dt, root), whos in ordered
    )
    odd = ordered[0][1]
    facts: dict[str, Any] = {
        "kind": "nccl_coll_trace_mismatch",
        "op_count": seq,
        "nranks": int(nranks),
        "calls": [
            {"op": k[0], "count": int(k[1]), "datatype": int(k[2]), "root": int(k[3])} for k, _ in ordered
        ],
        "odd_pids": sorted(int(w[1]) for w in odd) if len(ordered[0][1]) < len(ordered[1][1]) else [],
    }
    return [
        row.event(
            hit,
            f"NCCL's collective trace: the processes of one {nranks}-rank communicator issued different "
            f"calls as collective #{seq} ({said}): the ranks called different collectives or sizes at the "
            "same point, so they hang or exchange the wrong data",
            facts,
            dedupe=(row.code, "nccl_coll_trace", seq),
        )
    ]


# A thread's title (the whole paste, one short line: vocabulary's _title) that names the ranks' data as
# uneven: "DataLoader usage may yield different number of batches per epoch for multiple GPUs", "uneven
# number of batches across ranks", "hangs for certain batch_size, epoch_number combinations". A rank with
# fewer batches leaves the loop while the others call the gradient all-reduce it never joins (DDP without
# join(), Horovod, a kvstore's dist sync): the same fault as DDP join's "exhausted inputs" (mismatch.py).
# The data's split named as uneven across the devices ("The uneven distribution of the dataset to GPUs can
# cause the error `...unbound_buffer.cc:81] Timed out waiting xxxx ms for recv operation`", "unequal split of
# samples across ranks") says the same; a split named without the devices is a class imbalance, not read.
# In Chinese titles: 各卡数据量不一致 / 每个rank的batch数不同 / 多卡数据不均匀.
_SPLIT = r"(?:distribution|split(?:ting)?|shard(?:ing)?|partition(?:ing)?|division|allocation)"
_UNEVEN_TITLE = lazy_re.compile(
    r"(?i)(?:different|unequal|uneven|inconsistent|mismatched) numbers? of (?:batch|iteration|step|sample)"
    r"(?:e?s)?\b.{0,60}?\b(?:gpus?|ranks?|processes|process|workers?|nodes?|machines?|devices?)\b|"
    r"(?:uneven|unequal) (?:batches|inputs|data) (?:across|between|on|per|for) "
    r"(?:gpus|ranks|processes|workers|nodes|machines|devices)\b|"
    rf"(?:uneven|unequal|unbalanced|imbalanced) {_SPLIT} of "
    r"(?:the )?(?:data(?:set)?s?|samples|batches|inputs)"
    r" (?:to|across|between|among|on|over|per|for) (?:the |all |multiple |different |each )?"
    r"(?:gpus?|ranks?|processes|process|workers?|nodes?|machines?|devices?|cards?)\b|"
    r"\bhang(?:s|ing)? (?:for|with|on|at) (?:certain|some|specific|particular) batch[ _-]?sizes?|"
    r"(?:卡|gpu|rank|进程|节点)[^，。,.;；]{0,8}(?:数据|样本|batch)[^，。,.;；]{0,6}(?:不均|不一致|不同|不相同|不等)"
)


def _uneven_title(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _title(hit):
        return None
    return [
        row.event(
            hit,
            f'the report names uneven data across the ranks ("{m.group(0)}"): a rank with fewer batches '
            "leaves the loop while the others wait in the gradient all-reduce it never joins",
            {"kind": "uneven_inputs", "inferred_from": "title"},
            tier=1,
            dedupe=(row.code, "uneven_inputs"),
        )
    ]


# A thread's title that names the desync itself: DDP's unused parameters with the failure they cause ("DDP
# error with unused parameters", "RuntimeError when some parameters are not used in producing loss",
# "unused parameters cause DDP to hang", "find_unused_parameters 报错"): the reducer waits for gradients that
# never come (RUN202); or the ranks' collectives that disagree ("NCCL collective mismatch between ranks",
# "Ranks call collectives in a different order", "desync in all_gather"): RUN201. Not read: DDP's warning
# that it found none ("find_unused_parameters=True was specified ... but did not find any unused parameters"
# is a decoy of the corpus), a setting or a question (vocabulary's _TITLE_ASIDE, _ASKING), the debug
# switch NCCL_DESYNC_DEBUG.
_UNUSED = (
    r"unused[ _-]param\w*|param\w* (?:that |which )?(?:were |are |is |was )?not used in (?:producing|the)"
)
_FAILS = r"error|\bfail\w*|exception|\bcrash\w*|\bhang\w*|\bstuck\b|deadlock|报错|卡住|错误"
_UNUSED_TITLE = lazy_re.compile(
    rf"(?i)(?:{_UNUSED}).{{0,60}}?(?:{_FAILS})|(?:{_FAILS}).{{0,60}}?(?:{_UNUSED})"
)
# a bare "desync" only beside what the ranks run ("Audio and video desync" is a player's)
_DIST = (
    r"\bnccl|\bgloo|\bhccl|\branks?\b|\bgpus?\b|\bnodes?\b|collective|all_?reduce|all_?gather|broadcast|"
    r"barrier|process ?group|\bddp\b|\bfsdp|distributed|多卡|多机"
)
_DESYNC_WORD = r"(?<![_\w])desync(?:ed|hroni[sz]ed|hroni[sz]ation)?\b(?!_)"
_DESYNC_TITLE = lazy_re.compile(
    rf"(?i)(?:{_DESYNC_WORD}).{{0,40}}?(?:{_DIST})|(?:{_DIST}).{{0,40}}?(?:{_DESYNC_WORD})|"
    r"\bcollectives? (?:mismatch|desync)\w*|\bmismatch(?:ed|es)? (?:between |of |in )?(?:the )?collectives\b|"
    r"\bcollectives? (?:called |issued |run )?in (?:a )?different orders?\b|"
    r"\b(?:ranks?|processes) (?:call|calling|called|run|running|issue|issuing) (?:the )?(?:collectives in )?"
    r"different (?:collectives|orders?)\b"
)
_NONE_FOUND = lazy_re.compile(r"(?i)did not find any unused|no unused|without unused")


def _unused_title(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _title(hit) or _NONE_FOUND.search(hit.text) or _TITLE_ASIDE.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names DDP\'s unused parameters with the failure they cause ("{m.group(0)}"): the '
            "reducer waits for gradients of parameters the forward did not use",
            {"kind": "unused_parameters", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "unused_parameters"),
        )
    ]


def _desync_title(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _title(hit) or _TITLE_ASIDE.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names a desync of the ranks\' collectives ("{m.group(0)}"): the ranks did not call '
            "the same collectives in the same order",
            {"kind": "desync", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "desync_title"),
        )
    ]


# A user's debug prints from several ranks around one collective, each with the tensor's torch.Size ("# Rank 7
# tensor before allreduce: torch.Size([32768000]) 1.0" ... "# Rank 0 tensor before allreduce:
# torch.Size([409600]) 1.0", "[rank1] all_gather input shape: torch.Size([4, 1024])"): the lines of one
# template (the text without its rank, its shapes and its other numbers) printed by different ranks with
# different shapes say the ranks entered the collective with tensors of different sizes. NCCL's all-reduce,
# all-gather, reduce-scatter and broadcast need the same size on every rank: they hang or read past the
# smaller buffer. The object collectives (all_gather_object, broadcast_object_list, gather_object) take any
# size and are left out, and so are prints without a collective's name (a batch's shape varies by design).
_COLL_WORD = r"all_?reduce|all_?gather|allgather|reduce_?scatter|broadcast"
_RANK_SHAPES = lazy_re.compile(
    rf"(?i)^(?=.*\b(?:{_COLL_WORD}))(?=.*\brank\s*[:=#]?\s*\d+)(?!.*_object).*torch\.Size\(\["
)
_RANK_NO = lazy_re.compile(r"(?i)\brank\s*[:=#]?\s*(\d+)")
_TSIZE = lazy_re.compile(r"torch\.Size\(\[([\d, ]*)\]\)")
_NUMBER = lazy_re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _rank_shapes(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    groups: dict[str, dict[int, tuple[str, ...]]] = {}
    for ln in (*hit.before(40, same_rank=False), hit.line, *hit.after(40, same_rank=False)):
        t = ln.text
        r = _RANK_NO.search(t)
        if r is None or not _RANK_SHAPES.search(t):
            continue
        shapes = tuple(
            f"[{', '.join(d for d in s.replace(' ', '').split(',') if d)}]" for s in _TSIZE.findall(t)
        )
        template = _NUMBER.sub("#", _TSIZE.sub("<shape>", _RANK_NO.sub("rank", t))).strip()
        groups.setdefault(template, {}).setdefault(int(r.group(1)), shapes)
    odd = next((tpl for tpl, by in groups.items() if len(by) > 1 and len(set(by.values())) > 1), None)
    if odd is None:
        return None
    by_rank = groups[odd]
    counts: dict[tuple[str, ...], int] = {}
    for shp in by_rank.values():
        counts[shp] = counts.get(shp, 0) + 1
    common = max(counts, key=lambda k: counts[k])
    odd_ranks = sorted(r for r, shp in by_rank.items() if shp != common)
    op = re.search(_COLL_WORD, odd, re.IGNORECASE)
    said = "; ".join(f"rank {r}: {' '.join(shp)}" for r, shp in sorted(by_rank.items())[:8])
    return [
        row.event(
            hit,
            f"the ranks' own prints around {op.group(0) if op else 'a collective'} show tensors of different "
            f"sizes ({said}): the ranks entered the collective with different shapes, so it hangs or reads "
            "past the smaller buffer",
            {
                "kind": "rank_shapes_differ",
                "op": op.group(0) if op else None,
                "shapes": {str(r): " ".join(shp) for r, shp in sorted(by_rank.items())},
                "odd_ranks": odd_ranks,
            },
            tier=1,
            dedupe=(row.code, "rank_shapes"),
        )
    ]


SIGNATURES = (
    Signature(
        "ranks print different shapes around a collective",
        _RANK_SHAPES,
        _rank_shapes,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"torch.Size([",),
        worth=(
            rb"(?i:all_?reduce|all_?gather|allgather|reduce_?scatter|broadcast)[^\n]*torch\.Size\(\[|"
            rb"torch\.Size\(\[[^\n]*(?i:all_?reduce|all_?gather|allgather|reduce_?scatter|broadcast)",
        ),
        words=("torch.size([",),
        anchor_from="torch.Size([...]) as torch prints it, on a line naming the rank and the collective",
        examples=(
            "    # Rank 0 tensor before allreduce: torch.Size([409600]) 1.0",
            "[rank1] all_gather input shape: torch.Size([4, 1024])",
        ),
    ),
    Signature(
        "nccl collective trace disagrees across processes",
        _NCCL_COLL_FIRST,
        _nccl_coll,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b": opCount 0 ",),
        worth=(rb"NCCL INFO \w+: opCount 0 ",),
        words=("opcount",),
    ),
    Signature(
        "title: uneven batches across ranks",
        _UNEVEN_TITLE,
        _uneven_title,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(
            b"ifferent number",
            b"nequal number",
            b"neven number",
            b"nconsistent number",
            b"ismatched number",
            b"neven batches",
            b"neven inputs",
            b"neven data",
            b"nequal batches",
            b"nequal inputs",
            b"nequal data",
            b" certain batch",
            b" some batch",
            b" specific batch",
            b" particular batch",
            b"neven distribution",
            b"neven split",
            b"neven shard",
            b"neven partition",
            b"nequal distribution",
            b"nequal split",
            b"nbalanced distribution",
            b"mbalanced distribution",
            "不均".encode(),
            "不一致".encode(),
            "不同".encode(),
            "不相同".encode(),
            "不等".encode(),
        ),
        words=(
            "number",
            "uneven",
            "unequal",
            "unbalanced",
            "imbalanced",
            " batch",
            "不均",
            "不一致",
            "不同",
            "不等",
        ),
        anchor_from="the report's words in their usual spellings (case aside)",
        examples=(
            "Current Node/EdgeDataLoader usage in examples may yield different number of batches per epoch "
            "for multiple GPUs.",
            "Distributed multi-GPU training -- hangs for certain batch_size, epoch_number combinations.",
            "The uneven distribution of the dataset to GPUs can cause a gloo recv timeout",
            "多卡训练时各卡数据量不一致导致卡住",
        ),
    ),
    Signature(
        "title: ddp unused parameters fail",
        _UNUSED_TITLE,
        _unused_title,
        C.DDP_UNFINISHED_REDUCTION.code,
        tier=1,
        anchors=(
            b"nused param",
            b"nused_param",
            b"nused-param",
            b"not used in producing",
            b"not used in the",
        ),
        worth=(rb"(?i:unused[ _-]param|not used in (?:producing|the))",),
        words=("unused", "not used in"),
        anchor_from="the report's words in their usual spellings (case aside)",
        examples=(
            "DDP error with unused parameters",
            "RuntimeError when some parameters are not used in producing loss",
            "find_unused_parameters 报错",
        ),
    ),
    Signature(
        "title: collectives desync",
        _DESYNC_TITLE,
        _desync_title,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(
            b"desync",
            b"Desync",
            b"DESYNC",
            b"ollective mismatch",
            b"ollectives mismatch",
            b"collectives",
            b"Collectives",
        ),
        worth=(
            rb"(?i:desync|collectives? mismatch|mismatch\w* (?:between |of |in )?(?:the )?collectives|"
            rb"different orders?|different collectives)",
        ),
        words=("desync", "collective"),
        anchor_from="the report's words in their usual spellings (case aside)",
        examples=(
            "NCCL collective mismatch between ranks",
            "Ranks call collectives in a different order",
            "Desync in all_gather across 8 GPUs",
        ),
    ),
    Signature(
        "ddp parameter check frame",
        _DDP_VERIFY,
        _ddp_verify,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"_verify_param_shape_across_processes", b"_verify_params_across", b"_verify_model_across"),
        words=("_verify_param", "_verify_model"),
    ),
    Signature(
        "fsdp forward order warning",
        _FSDP_ORDER,
        _fsdp_order,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Forward order differs from that of the first",),
        worth=(rb"Forward order differs from that of the first",),
        words=("forward order differs",),
    ),
    Signature(
        "hccl parameter check",
        _HCCL_ARGS,
        _hccl_args,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"communication are inconsistent between ranks",),
        worth=(rb"communication are inconsistent between ranks",),
        words=("inconsistent between ranks",),
    ),
)

parse = gated_reader(SIGNATURES)

"""collective_mismatch: ranks that disagree on which collective comes next, and DDP's reducer
errors (torch/csrc/distributed/c10d/reducer.cpp, ProcessGroupWrapper.cpp).

Formats: TORCH_DISTRIBUTED_DEBUG=DETAIL "Detected mismatch between collectives on ranks. Rank 0
is running collective: CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE,
TensorShape=[10], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(...)), but Rank 1 is
running collective: CollectiveFingerPrint(SequenceNumber=7, OpType=BROADCAST, ...)." (older:
"Rank 0 is running inconsistent collective: CollectiveFingerPrint(OpType=ALLREDUCE, ...)";
newer add "Collectives differ in the following aspects: \t Op type: ALLREDUCEvs BROADCAST");
reducer: "Expected to have finished reduction in the prior iteration before starting a new one.
... Parameter indices which did not receive grad for rank 1: 3 4" and "Parameters which did not
receive grad for rank 1: fc2.weight, fc2.bias"; "Expected to mark a variable ready only once.
... Parameter at index 5 with name fc.weight has been marked as ready twice."; NCCL's size check
("message truncated : receiving 1024 bytes instead of 256", nccl_detail.TRUNCATED) quoted outside a WARN;
bootstrap.cc's "Message truncated : received ..." is NCCL's own exchange, an internal error
(nccl_detail.bootstrap_truncated).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.horovod_shutdown import HVD_SHUTDOWN as _HVD_SHUTDOWN
from pgdoctor.diagnose.rules.horovod_shutdown import hvd_shutdown as _hvd_shutdown
from pgdoctor.diagnose.rules.nccl_detail import TRUNCATED, bootstrap_truncated
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_MISMATCH = lazy_re.compile(r"Detected mismatch between collectives on ranks")
_FP = lazy_re.compile(
    r"Rank (\d+) is running (?:inconsistent )?collective: CollectiveFingerPrint\((.*?)\)(?:,|\.| but|$)"
)
_FIELDS = {
    "SequenceNumber": lazy_re.compile(r"SequenceNumber=(\d+)"),
    "OpType": lazy_re.compile(r"OpType=([A-Z_]+)"),
    "TensorShape": lazy_re.compile(r"TensorShape=(\[[^\]]*\])"),
    "TensorDtypes": lazy_re.compile(r"TensorDtypes=([^,\s)]+)"),
}
# ProcessGroupWrapper's compute_collective_diff: "Collectives differ in the following aspects: \t
# Sequence number: 1649vs 0  Op type: BARRIERvs GATHER  Tensor Tensor shapes: [2]vs [3]"
_DIFF = lazy_re.compile(r"(Sequence number|Op type|Tensor [\w ]+?): (\S+?) ?vs (\S+)")
_UNFINISHED = lazy_re.compile(r"Expected to have finished reduction in the prior iteration")
# The two detail lines alone stand for the error: an issue's title names the line in a person's casing and
# leaves the list off ("parameters which did not receive grad for rank 1"), a cut paste ends at the colon.
_UNUSED_IDX = lazy_re.compile(
    r"[Pp]arameter indices which did not receive grad for rank (\d+)(?::\s*([\d ]*))?"
)
_UNUSED_NAMES = lazy_re.compile(
    r"[Pp]arameters which did not receive grad for rank (\d+)(?::\s*(.+?)(?:\s*Parameter indices|$))?"
)
# The rest of the reducer's message (reducer.cpp ensure_prior_reduction_finished, 1.0-2.x), each sentence
# of which stands for the whole when a paste kept only part of it: 1.0-1.1 "...not used in producing its
# output (the return value of `forward`)", 1.2+ "...not used in producing loss. You can enable unused
# parameter detection by (1) passing the keyword argument `find_unused_parameters=True`...", 1.9+ "Since
# `find_unused_parameters=True` is enabled, this likely  means that not all `forward` outputs participate
# in computing loss", "...wasn't able to locate the output tensors in the return value of your module's
# `forward` function", the last line without TORCH_DISTRIBUTED_DEBUG ("In addition, you can set the
# environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about
# which particular parameters did not receive gradient on this rank as part of this error"), and its
# per-parameter INFO line with it ("[Rank 1] Parameter: fc2.weight did not get gradient in backwards
# pass."). Lightning 2.x replaces the message: "It looks like your LightningModule has parameters that
# were not used in producing the loss returned by training_step. If this is intentional, you must enable
# the detection of unused parameters in DDP, ...".
_UNUSED_PARTS = lazy_re.compile(
    r"module has parameters that were not used in producing|"
    r"You can enable unused parameter detection by|"
    r"Since `find_unused_parameters=True` is enabled, this likely|"
    r"wasn't able to locate the output tensors in the return value of your module|"
    r"which particular parameters did not receive gradient on this rank|"
    r"LightningModule has parameters that were not used in producing the loss"
)
_DETAIL_UNUSED = lazy_re.compile(r"\[Rank (\d+)\] Parameter: (\S+) did not get gradient in backwards pass")
_TWICE = lazy_re.compile(r"Expected to mark a variable ready only once")
# DeepSpeed ZeRO-1/2's reduction hook (runtime/zero/stage_1_and_2.py, stage2.py of 0.3-0.4) on the same
# fault as the reducer's "ready twice": "The parameter 12 has already been reduced.             Gradient
# computed twice for this partition.             Multiple gradient reduction is currently not supported"
# (a backward pass through a parameter twice: reentrant checkpointing, two losses over shared weights).
_ZERO_REDUCED = lazy_re.compile(r"The parameter ([\w.]+) has already been reduced")
_ZERO_TWICE = lazy_re.compile(
    r"(?:The parameter ([\w.]+) has already been reduced\.\s*)?Gradient computed twice for this partition"
)
# DDP's join with throw_on_early_termination=True (nn/parallel/distributed.py, algorithms/join.py, 1.10+):
# "Detected at least one rank that exhausted inputs. Throwing across all ranks." - the ranks were given
# different numbers of batches, the uneven inputs that otherwise leave the others waiting in a collective.
_EXHAUSTED = lazy_re.compile(r"Detected at least one rank that exhausted inputs")
_TWICE_NAME = lazy_re.compile(
    r"Parameter at index (\d+)(?: with name ([\w.]+))? has been marked as ready twice"
)
# DDP's construction-time check that every rank holds the same model (distributed/utils.py, reducer.cpp):
# "DDP expects same model across all ranks, but Rank 0 has 236 params, while rank 1 has inconsistent 0
# params." (a title keeps the head alone) and 1.x's "params[0] in this process with sizes [...] appears not
# to match sizes of the same param in process 0."
_DDP_MODEL = lazy_re.compile(
    r"DDP expects same model across all ranks(?:, but Rank (\d+) has (\d+) params, while rank (\d+) has "
    r"inconsistent (\d+) params)?|appears not to match (?:sizes|strides) of the same param in process (\d+)"
)
# gloo's pair.cc when two ranks' buffers of one collective differ in size: "op.preamble.length <=
# op.nbytes. 8 vs 4"
# gloo's newer pair.cc (torch 2.13's bundled gloo) words it: "Received data size doesn't match expected
# size. Is there a distributed collective mismatch in your code?"
_GLOO_SIZE = lazy_re.compile(
    r"op\.preamble\.length <= op\.nbytes\.?\s*(\d+) vs (\d+)|"
    r"Received data size doesn't match expected size\. Is there a distributed collective mismatch"
)


# Horovod's coordinator (horovod/common/controller.cc ConstructResponse) when the ranks' requests for one
# tensor disagree: "Mismatched MPI operations: One rank did an allreduce, but another rank did an
# allgather.", "Mismatched data types: One rank had type float32, but another rank had type float64.",
# "Mismatched allreduce tensor shapes: One or more rank sent tensors of different shapes ...",
# "Mismatched broadcast root ranks: One rank specified root rank 0, but another rank specified root rank
# 1." (also allgather / alltoall / reducescatter, reduction operations, 0.2x's "Mismatched prescale and/or
# postscale factors: One rank sent factors (1, 0.5), ..." and "Mismatched ALLREDUCE CPU/GPU device selection:
# One rank specified device GPU, ..."); a title keeps the head alone ("Mismatched allgather tensor shapes").
_HVD_MISMATCH = lazy_re.compile(
    r"Mismatched ([\w /]+?): One (?:or more )?ranks? (?:did|had|sent|specified|requested)|Mismatched ((?i:"
    r"allreduce|allgather|broadcast|alltoall|reducescatter|MPI|Horovod) (?:tensor shapes|root ranks|"
    r"operations|CPU/GPU device selection)|prescale and/or postscale factors)\b"
)


def _hvd_mismatch(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            f"Horovod: the ranks' requests for one tensor disagree ({m.group(1) or m.group(2)}): they called "
            "different collectives or passed different tensors",
            {"kind": "horovod_mismatch", "differ": m.group(1) or m.group(2)},
            dedupe=(row.code, "horovod", m.group(1) or m.group(2)),
        )
    ]


def _ddp_model(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    facts: dict[str, Any] = {"kind": "ddp_model_mismatch"}
    if m.group(1):
        facts.update(
            params_by_rank={m.group(1): int(m.group(2)), m.group(3): int(m.group(4))},
            ranks=sorted({int(m.group(1)), int(m.group(3))}),
        )
    return [
        row.event(
            hit,
            "DDP found different models on the ranks (parameter count, "
            "sizes or strides differ): the ranks built or loaded different models",
            facts,
            dedupe=(row.code, "ddp_model"),
        )
    ]


def _gloo_size(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if m.group(1) is None:
        return [
            row.event(
                hit,
                "gloo: a peer sent a buffer of another size than this rank expected: the ranks called "
                "the collective with different tensor sizes (or different collectives)",
                {"backend": "gloo"},
                dedupe=(row.code, "gloo_size"),
            )
        ]
    return [
        row.event(
            hit,
            f"gloo: a peer sent {m.group(1)} bytes where {m.group(2)} were "
            "expected: the ranks called the collective with different tensor sizes",
            {"bytes": int(m.group(1)), "expected_bytes": int(m.group(2)), "backend": "gloo"},
            dedupe=(row.code, "gloo_size"),
        )
    ]


def _fingerprints(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    text, used = hit.block(6)
    ranks: dict[int, dict[str, Any]] = {}
    for m in _FP.finditer(text):
        fp = m.group(2)
        # Each field by its own name: some versions print them without a separator
        # ("CollectiveFingerPrint(SequenceNumber=1649OpType=BARRIER)").
        kv = {k: f.group(1) for k, f in ((k, rx.search(fp)) for k, rx in _FIELDS.items()) if f}
        ranks[int(m.group(1))] = {
            "op": kv.get("OpType"),
            "seq": int(kv["SequenceNumber"]) if kv.get("SequenceNumber", "").isdigit() else None,
            "shape": kv.get("TensorShape"),
            "dtype": kv.get("TensorDtypes"),
        }
    facts: dict[str, Any] = {"fingerprints": {str(k): v for k, v in ranks.items()}}
    aspects = text.split("Collectives differ in the following aspects:", 1)
    if len(aspects) == 2:
        diff = {d.group(1).strip(): [d.group(2), d.group(3)] for d in _DIFF.finditer(aspects[1])}
        if diff:
            facts["differ"] = diff
    if ranks:
        facts["ranks"] = sorted(ranks)
        ops = {v["op"] for v in ranks.values()}
        seqs = {v["seq"] for v in ranks.values() if v["seq"] is not None}
        if seqs:
            facts["seq"] = min(seqs)
        desc = "; ".join(f"rank {k}: {v['op']} {v['shape'] or ''}".strip() for k, v in sorted(ranks.items()))
        differ = " (ops differ)" if len(ops) > 1 else " (shapes or dtypes differ)"
        msg = f"ranks ran different collectives{differ}: {desc}"
    else:
        msg = "TORCH_DISTRIBUTED_DEBUG=DETAIL detected a collective mismatch between ranks"
    return [row.event(hit, msg, facts, used, dedupe=(row.code,))]


# The diff alone (2.1+): the end of the DETAIL message that a terminal or a paste put on its own line, the
# fingerprints before it cut off ("...memory_format=(nullopt))).Collectives differ in the following aspects:
#   Tensor Tensor shapes: 195812480vs 51123456"). Only ProcessGroupWrapper writes it.
_DIFF_ONLY = lazy_re.compile(r"Collectives differ in the following aspects:")


def _diff_only(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    diff = {d.group(1).strip(): [d.group(2), d.group(3)] for d in _DIFF.finditer(hit.text[m.end() :])}
    if not diff:
        nxt = hit.after(1)
        diff = (
            {d.group(1).strip(): [d.group(2), d.group(3)] for d in _DIFF.finditer(nxt[0].text)} if nxt else {}
        )
    desc = "; ".join(f"{k}: {a} vs {b}" for k, (a, b) in diff.items())
    return [
        row.event(
            hit,
            "TORCH_DISTRIBUTED_DEBUG=DETAIL found the ranks in different collectives"
            + (f" ({desc})" if desc else ""),
            {"differ": diff} if diff else {},
            dedupe=(row.code,),
        )
    ]


def _unfinished(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    # The reducer's detail lines stand for the whole error when a paste cut its first sentence.
    text = " ".join([hit.text] + [ln.text for ln in hit.after(20)])
    facts: dict[str, Any] = {}
    mi = _UNUSED_IDX.search(text)
    mn = _UNUSED_NAMES.search(text)
    if mi:
        if mi.group(2) and mi.group(2).split():
            facts["unused_param_indices"] = [int(x) for x in mi.group(2).split()]
        facts["rank"] = int(mi.group(1))
    if mn:
        listed = [p.strip() for p in (mn.group(2) or "").split(",") if p.strip()][:50]
        if listed:
            facts["unused_params"] = listed
        facts["rank"] = int(mn.group(1))
    detail = list(_DETAIL_UNUSED.finditer(text))
    if detail and "unused_params" not in facts:
        first = detail[0].group(1)  # the INFO lines of one rank (others may be interleaved)
        facts["unused_params"] = [d.group(2) for d in detail if d.group(1) == first][:50]
        facts["rank"] = int(first)
    if "LightningModule has parameters" in text:
        facts["framework"] = "lightning"
    names = facts.get("unused_params") or facts.get("unused_param_indices")
    msg = "DDP: parameters did not receive gradients in the previous iteration" + (
        f": {names}" if names else ""
    )
    return [row.event(hit, msg, facts, rank=facts.get("rank"), dedupe=(row.code,))]


# Accelerate's debug mode (ACCELERATE_DEBUG_MODE / `accelerate launch --debug`, utils/operations.py
# verify_operation, 0.21+) gathers each process's tensor shapes before a collective: "Cannot apply desired
# operation due to shape mismatches. All shapes across devices must be valid." then "Operation:
# `accelerate.utils.operations.broadcast`", "Input shapes:" and one "  - Process 1: [1, 2, 5]" per process.
# The same check's other wording, as real logs print it (huggingface/accelerate#2643, gather_for_metrics of
# per-image detection dicts on 3 GPUs): "accelerate.utils.operations.DistributedOperationException: Impossible
# to apply the desired operation due to inadequate shapes. All shapes on the devices must be valid."
_ACC_SHAPES = lazy_re.compile(
    r"Cannot apply desired operation due to shape mismatches"
    r"|Impossible to apply the desired operation due to inadequate shapes"
)
_ACC_OP = lazy_re.compile(r"Operation: `(?:[\w.]+\.)?(\w+)`")
_ACC_PROC = lazy_re.compile(r"^\s*-\s*Process (\d+): (.+?)\s*$")


def _acc_shapes(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    shapes: dict[int, str] = {}
    op = None
    for ln in hit.after(40, same_rank=False):
        o, pr = _ACC_OP.search(ln.text), _ACC_PROC.match(ln.text)
        if o and op is None:
            op = o.group(1)
        elif pr:
            shapes[int(pr.group(1))] = pr.group(2)
        elif shapes:
            break
    facts: dict[str, Any] = {"kind": "accelerate_shape_check", "framework": "accelerate"}
    if op:
        facts["op"] = op
    if shapes:
        facts["shapes_by_rank"] = {str(r): v for r, v in sorted(shapes.items())}
        groups: dict[str, list[int]] = {}
        for r, v in shapes.items():
            groups.setdefault(v, []).append(r)
        by_size = sorted(groups.values(), key=lambda g: (len(g), g))
        if len(by_size) > 1 and len(by_size[0]) < len(by_size[1]):  # one smallest group: the odd ranks
            facts["ranks"] = sorted(by_size[0])
    odd = facts.get("ranks", [])
    return [
        row.event(
            hit,
            "Accelerate's debug check: the processes passed tensors of different shapes to "
            + (f"{op}" if op else "a collective")
            + (f" ({'; '.join(f'process {r}: {v}' for r, v in sorted(shapes.items()))})" if shapes else "")
            + (f"; rank(s) {odd} are the odd ones" if odd else ""),
            facts,
            rank=odd[0] if len(odd) == 1 else None,
            dedupe=(row.code, "accelerate_shapes"),
        )
    ]


def _exhausted(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "DDP's join: a rank ran out of inputs before the others (the ranks were given different "
            "numbers of batches); without join the others would wait in a collective it never calls",
            {"kind": "uneven_inputs"},
            dedupe=(row.code, "uneven_inputs"),
        )
    ]


def _twice(row: Signature, hit: Hit, _m: re.Match[str]) -> Optional[list[Event]]:
    text = " ".join([hit.text] + [ln.text for ln in hit.after(20)])
    tw = _TWICE_NAME.search(text)
    zt = _ZERO_TWICE.search(text)
    facts: dict[str, Any] = {"param_index": int(tw.group(1)), "param": tw.group(2)} if tw else {}
    if zt:
        facts["framework"] = "deepspeed"
        # the assertion hard-wrapped at its continuation spaces: the parameter is on the line above
        named = zt.group(1) or next(
            (b.group(1) for ln in hit.before(2) if (b := _ZERO_REDUCED.search(ln.text))), None
        )
        if named:
            facts.update({"param_index": int(named)} if named.isdigit() else {"param": named})
    name = facts.get("param") or (
        f"index {facts['param_index']}" if "param_index" in facts else "a parameter"
    )
    return [
        row.event(
            hit,
            f"DDP: {name} was marked ready twice in one iteration "
            "(reentrant checkpointing, a shared parameter, or a module used twice)",
            facts,
            dedupe=(row.code,),
        )
    ]


# NCCL's RAS report (2.24+, `ncclras`): "Communicator ranks have different AllGather operation counts",
# then "30 ranks have launched up to operation 640", "2 ranks have launched up to operation 641" and the
# ranks of the smaller group ("Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124").
_RAS_COUNTS = lazy_re.compile(r"Communicator ranks have different (\w+) operation counts")
_RAS_GROUP = lazy_re.compile(r"(\d+) ranks? (?:have|has) launched up to operation (\d+)")
_RAS_RANK = lazy_re.compile(r"\bRank (\d+) -- GPU")


def _ras_counts(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    groups: list[tuple[int, int]] = []
    listed: list[int] = []
    for ln in hit.after(16, same_rank=False):
        g = _RAS_GROUP.search(ln.text)
        if g:
            groups.append((int(g.group(1)), int(g.group(2))))
            continue
        found = [int(r.group(1)) for r in _RAS_RANK.finditer(ln.text)]  # a paste may join them on one line
        if found:
            listed.extend(found)
        elif listed:
            break
    facts: dict[str, Any] = {
        "kind": "nccl_ras_operation_counts",
        "op": m.group(1),
        "ranks_by_operation": {str(op): n for n, op in groups},
    }
    if listed:
        facts["suspect_ranks"] = sorted(listed)
    return [
        row.event(
            hit,
            f"NCCL's RAS: the ranks of a communicator launched different numbers of {m.group(1)} "
            "operations" + (f"; rank(s) {sorted(listed)} are the odd ones out" if listed else ""),
            facts,
            rank=listed[0] if len(listed) == 1 else None,
            dedupe=(row.code, "ras"),
        )
    ]


# Horovod's stall inspector (horovod/common/stall_inspector.cc): "One or more tensors were submitted to be
# reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than
# 60 seconds. This may indicate that different ranks are trying to submit different tensors or that only
# subset of ranks is submitting tensors, which will cause deadlock." then, up to 0.19, "Stalled ops:" and
# "<tensor> [missing ranks: 0, 3]" per tensor; from 0.20 "Missing ranks:" and "<rank>: [<tensor>, ...]".
# The same report when the stall passed HOROVOD_STALL_SHUTDOWN_TIME_SECONDS ends: "One or more rank (marked
# by "!") is stalled for longer than 600 seconds. Will shutdown." (0.20+, logged at ERROR).
# Pasted cut ("One or more tensors were submitted to be reduced, gathered" as a thread's title, "...
# submitted to be reduced..." over "waiting for remainder of ranks for more than 60 seconds." in a note) or
# copied without a space ("broadcasted bysubset of ranks"): the same report.
_HVD_STALL = lazy_re.compile(
    r"submitted to be reduced, gathered or broadcasted by ?subset of ranks|"
    r"tensors were submitted to be reduced(?:, gathered\b|\s*(?:\.\.\.|\u2026))|"
    r"waiting for remainder of ranks for more than \d+ seconds|"
    r"One or more rank \(marked by \W+!\W+\) is stalled for longer than \d+ seconds"
)
# (the line normaliser takes "[m" for the remnant of a terminal colour code: "issing" is what is left)
_HVD_OLD = lazy_re.compile(r"(?:\[m)?issing ranks: ([\d, ]+)\]")
# A paste of the per-tensor lines alone, without the report's head ("MetricAverageCallback/HorovodAllreduce_
# MetricAverageCallback_acc_0 [missing ranks: 0, 1, 3, 4]", repeated each minute while the stall lasts):
# the same report (a row of its own, after the head's, so that the head reads the whole table first). Before
# 0.13 the table listed the ranks that were ready: "Stalled ops: HorovodBroadcast_..._weights_0 [ready ranks:
# 5, 6, 3, 1, 4, 0]" (the others never submitted the tensor).
# (?<!\S): the leftmost match starts at the start of its run of non-space characters (linear search)
_HVD_TENSOR = lazy_re.compile(r"(?<!\S)\S+ (?:(?:\[m)?issing|\[ready) ranks: ([\d, ]+)\]")
_HVD_READY = lazy_re.compile(r"\[ready ranks: ([\d, ]+)\]")
# (0.20-0.2x head the table "Stalled ranks:" and mark with "!" the ranks past the shutdown time: "0!: [...]")
_HVD_NEW = lazy_re.compile(r"^\s*(\d+)!?: \[")


def _hvd_stall(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    missing: set[int] = set()
    tensors = 0
    table = False
    for ln in [hit.line, *hit.after(64, same_rank=False)]:
        old, new = _HVD_OLD.search(ln.text), _HVD_NEW.match(ln.text)
        if old:
            missing.update(int(x) for x in re.findall(r"\d+", old.group(1)))
            tensors += 1
        elif new:
            missing.add(int(new.group(1)))
        elif table and ln.rank is not None and ln.text.lstrip().startswith("["):
            missing.add(ln.rank)  # "1: [...]" read as a rank prefix by the line normaliser
        table = table or ln.text.strip() in ("Missing ranks:", "Stalled ranks:")
    ready = {
        int(x)
        for ln in [hit.line, *hit.after(64, False)]
        for r in _HVD_READY.findall(ln.text)
        for x in re.findall(r"\d+", r)
    }
    facts: dict[str, Any] = {"kind": "horovod_stall", "framework": "horovod"}
    if ready:
        facts["ready_ranks"] = sorted(ready)
    if missing:
        facts["suspect_ranks"] = facts["missing_ranks"] = sorted(missing)
    if tensors:
        facts["stalled_tensors"] = tensors
    who = f"; rank(s) {sorted(missing)} never submitted them" if missing else ""
    return [
        row.event(
            hit,
            "Horovod's stall inspector: some ranks submitted collectives that the others did not "
            f"(different tensors, or a subset of ranks reached the collective){who}",
            facts,
            rank=min(missing) if len(missing) == 1 else None,
            dedupe=(row.code, "horovod_stall"),
        )
    ]


# fairseq's all_gather_list (fairseq/distributed_utils.py, later fairseq/distributed/utils.py) when the
# pickled buffer it gathered from the other ranks cannot be read: "Unable to unpickle data from other
# workers. all_gather_list requires all workers to enter the function together, so this error usually
# indicates that the workers have fallen out of sync somehow." The ranks called different collectives
# (one finished an epoch early, or ran out of memory: an OOM line, when shown, is the cause).
_FAIRSEQ_SYNC = lazy_re.compile(
    r"Unable to unpickle data from other workers|all_gather_list requires all workers to enter the function"
)


def _fairseq_sync(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    return [
        row.event(
            hit,
            "fairseq's all_gather_list read garbage from the other ranks: the workers fell out of sync "
            "(they called different collectives; one finished its epoch early or ran out of memory)",
            {"kind": "fairseq_all_gather_list", "framework": "fairseq"},
            dedupe=(row.code, "fairseq_sync"),
        )
    ]


def _truncated(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    # NCCL's size check quoted outside a WARN or torch's "Last error:" (prose, a summary line): the same fact.
    boot = bootstrap_truncated(hit, hit.text, {}, None)
    if boot:
        return boot  # the bootstrap's own exchange, not the program's collectives
    got, want = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
    return [
        row.event(
            hit,
            f"NCCL received {got} bytes where {want} were expected: ranks called the collective with "
            "different sizes (or different collectives)",
            {"bytes": int(got), "expected_bytes": int(want)},
            dedupe=(row.code, "truncated"),
        )
    ]


def _either(*rxs: re.Pattern[str]) -> re.Pattern[str]:
    return lazy_re.compile("|".join(f"(?:{rx.pattern})" for rx in rxs))


_RUNTIME = "the 'RuntimeError: ' (or 'what(): ') before torch's message"
SIGNATURES = (
    # tier 1: a rank that died first also leaves the others waiting; its own error, when shown, is the cause
    Signature(
        "horovod stall inspector",
        _HVD_STALL,
        _hvd_stall,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(
            b"subset of ranks",
            b"submitted to be reduced",
            b"remainder of ranks",
            b"is stalled for longer than",
        ),
        worth=(
            rb"subset of ranks",
            rb"submitted to be reduced",
            rb"remainder of ranks for more than",
            rb"is stalled for longer than",
        ),
    ),
    Signature(
        "horovod stalled tensor lines",
        _HVD_TENSOR,
        _hvd_stall,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(b"issing ranks: ", b"[ready ranks: "),
        worth=(rb"issing ranks: \d", rb"\[ready ranks: \d"),
    ),
    Signature(
        "nccl size check quoted",
        TRUNCATED,
        _truncated,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"essage truncated", b"mismatch error", b"bytes instead of"),
        worth=(rb"essage truncated", rb"mismatch error", rb"receiving \d+ bytes instead of"),
    ),
    Signature(
        "nccl ras operation counts",
        _RAS_COUNTS,
        _ras_counts,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"operation counts",),
        worth=(rb"operation counts",),
    ),
    Signature(
        "horovod shutdown",
        _HVD_SHUTDOWN,
        _hvd_shutdown,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(b"Horovod has been shut down",),
        worth=(rb"Horovod has been shut down",),
    ),
    Signature(
        "fairseq all_gather_list out of sync",
        _FAIRSEQ_SYNC,
        _fairseq_sync,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"unpickle data from other workers", b"all_gather_list requires"),
        worth=(rb"unpickle data from other workers", rb"all_gather_list requires"),
    ),
    Signature(
        "horovod request mismatch",
        _HVD_MISMATCH,
        _hvd_mismatch,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Mismatched ",),
        worth=(rb"Mismatched \w",),
    ),
    Signature(
        "ddp model differs",
        _DDP_MODEL,
        _ddp_model,
        C.COLLECTIVE_MISMATCH.code,
        # By the message's own words: an issue's title, or a wrapper that prints the exception type on
        # the line above, drops the 'RuntimeError: ' before it.
        anchors=(b"DDP expects same model", b"of the same param in process"),
        worth=(rb"DDP expects same model", rb"of the same param in process"),
        examples=(
            "RuntimeError: DDP expects same model across all ranks, but Rank 0 has 236 params, while rank 1 "
            "has inconsistent 0 params.",
        ),
    ),
    Signature(
        "gloo size",
        _GLOO_SIZE,
        _gloo_size,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"rror",),
        worth=(rb"Error\b",),
        anchor_from=_RUNTIME,
        examples=(
            "RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/pair.cc:446] "
            "op.preamble.length <= op.nbytes. 8 vs 4",
        ),
    ),
    Signature(
        "fingerprints",
        _MISMATCH,
        _fingerprints,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"rror", b"mismatch between collectives"),
        worth=(rb"mismatch between collectives",),
        anchor_from=_RUNTIME,
        examples=(
            "RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
            "CollectiveFingerPrint(SequenceNumber=7, OpType=ALLREDUCE)",
        ),
    ),
    Signature(
        "fingerprint diff alone",
        _DIFF_ONLY,
        _diff_only,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"Collectives differ in the following",),
        worth=(rb"Collectives differ in the following",),
    ),
    Signature(
        "accelerate shape check",
        _ACC_SHAPES,
        _acc_shapes,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"shape mismatches", b"inadequate shapes"),
        worth=(rb"shape mismatches", rb"inadequate shapes"),
    ),
    Signature(
        "ddp join uneven inputs",
        _EXHAUSTED,
        _exhausted,
        C.COLLECTIVE_MISMATCH.code,
        anchors=(b"exhausted inputs",),
        worth=(rb"exhausted inputs",),
    ),
    Signature(
        "unfinished reduction",
        _either(_UNFINISHED, _UNUSED_IDX, _UNUSED_NAMES, _UNUSED_PARTS, _DETAIL_UNUSED),
        _unfinished,
        C.DDP_UNFINISHED_REDUCTION.code,
        # Every sentence by its own words, the first one too: an issue's title, or Ray printing the
        # exception type on the line above, drops the 'RuntimeError: ' before it.
        anchors=(
            b"inished reduction in the prior",
            b"receive grad",
            b"not used in producing",
            b"unused parameter detection",
            b"is enabled, this likely",
            b"locate the output tensors",
            b"get gradient in backwards",
        ),
        worth=(
            rb"inished reduction in the prior",
            rb"receive grad",
            rb"not used in producing",
            rb"unused parameter detection",
            rb"is enabled, this likely",
            rb"locate the output tensors",
            rb"get gradient in backwards",
        ),
        examples=(
            "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new "
            "one.",
            "Parameter indices which did not receive grad for rank 1: 3 4",
        ),
    ),
    Signature(
        "ready twice",
        _either(_TWICE, _TWICE_NAME, _ZERO_TWICE),
        _twice,
        C.DDP_READY_TWICE.code,
        # (the first sentence by its own words, with or without the 'RuntimeError: ' before it)
        anchors=(b"eady twice", b"computed twice", b"variable ready only once"),
        worth=(rb"eady twice", rb"computed twice", rb"variable ready only once"),
        examples=(
            "RuntimeError: Expected to mark a variable ready only once.",
            "Parameter at index 5 with name fc.weight has been marked as ready twice.",
        ),
    ),
)

parse = gated_reader(SIGNATURES)

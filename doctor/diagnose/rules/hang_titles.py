"""A thread's title (the whole paste, one short line: vocabulary's _title) that says a collective hangs.

A hang prints nothing: many threads about one keep only their title ("NCCL hang on socket recv()", "all
reduce hangs (NCCL 2.8.0.3)", "dist.barrier() stuck forever", "Deadlock in all_gather with 8 GPUs"). What
hangs and that it hangs, within a few words of each other in one clause (vocabulary's _near), is a collective
that never completes: the watchdog's timeout class (RUN151), read at tier 1 as a title. A title that names
where in the loop it hangs, at the end of the data ("Training hangs in the end while calling dist.barrier()",
"DDP hangs after the last batch", "stuck at the end of epoch"), says more: one rank ran out of batches and
left the loop (or entered a barrier) while the others still wait in the gradient all-reduce: the ranks
disagree on the number of steps (uneven inputs, desync_hints' title row), RUN201.

The collective is also read where a title names it as the call a person pastes, whose module path holds
dots that would end the clause ("Training stuck at dist.barrier()", "Hang on dist.all_reduce with multiple
GPUs", Accelerate's barrier "accelerator.wait_for_everyone() hangs"), in Chinese ("程序在all_reduce处卡住",
"训练过程中卡在 barrier", with 卡住 / 卡死 / 卡在 / 卡着 / 挂起 / 死锁; "NCCL 超时", "all_reduce超时" for its
timeout), and where it names DDP or FSDP for their collectives ("DDP hangs during validation"), that last
only without a data loader's workers, a socket, a model's loading, inference or a value that stays (the
exclusions of the multi-GPU training row). A start-up named in Chinese (初始化, 启动, 连接) is the start-up's.

A title that says the job's multi-GPU training timed out ("多卡训练超时问题", "Timeout in multi-node
training", "DDP training times out after 30 minutes") names the same watchdog timeout in a person's words:
the timeouts of the start-up, a store, a socket or a data loader name themselves ("DDP 训练后显示
sockettimeout", "DataLoader timed out"), and those titles are not read here. A hang of "multi-GPU training"
alone was not read so while the released titles that said it were an uneven-inputs desync and a start-up
stall; v21's and v22's halves added three that are the watchdog's hang ("Marian hangs on multiple GPUs, GPU
utilization remains at constant 100%", "多卡训练卡住，单卡GPU利用率为0，其余100%"), so training on several
GPUs that hangs is read too ("title: multi-gpu training hangs", RUN151), not where what hangs is a server or
inference, the loading or compiling of the model, the start-up or the data loader's workers.

A hang that comes when one rank alone meets a condition ("The SyncBatchNorm function will stop, when one of
multi-GPU run into "no valid points"", "Training hangs when one of the GPUs gets an empty batch") says that
rank took another path and the others wait in a collective it never joins: RUN201, not where that rank died,
ran out of memory or raised an error.

A person's mark in a pasted log that it hangs there ("*hangs*", "(stuck here)", "... it hangs forever"),
right under NCCL's lines of a communicator that came up (its rings or channels, "Launch mode Group/CGMD" of
2.0-2.3, "Init COMPLETE", "Connected all rings"), says the first collective never completed: RUN151. Under
any other line (the bootstrap, a traceback, a progress bar) it says nothing of where, and is not read.

A title that names the hang with GeForce RTX 40-series boards ("Deadlock in distribution with multiple
4090", "NCCL hangs on 2x RTX 4090", "多卡4090训练卡住") says more than a collective that never completes:
those boards have no working peer-to-peer between them, yet drivers before 525.105 reported it as available,
so NCCL's P2P transport waits forever in the first collective (NCCL_P2P_DISABLE=1 or a newer driver is the
fix): RUN590 (platform_signs), tier 1, before the collective-hang row. A timeout, an OOM or a start-up stall
on such boards is left to those rows.

Never read: a line with more than a title (a program's output says more than its hang), a warning that a
hang could happen ("This can potentially cause a hang", "Collectives are unchecked and may ... hang"), a
hang in the start-up ("NCCL init hangs", "stuck at NCCL INFO Bootstrap": the communicator's creation, not a
collective), a question or a request (vocabulary's _ASKING), a setting or a fix (_TITLE_ASIDE: "set
NCCL_BLOCKING_WAIT to avoid the hang", "no hang", "without hanging"), and a hang of something that is not a
collective ("Dataloader hangs with num_workers > 0", "vLLM server hangs on startup").
"""

from __future__ import annotations

import re
from typing import Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.rules.vocabulary import _GAP, _TITLE_ASIDE, _title
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.model import lazy_re

_HANG = r"\bhang(?:s|ing|ed)?\b|\bhung\b|\bstuck\b|\bdeadlock(?:s|ed)?\b|\bfreez(?:e|es|ing)\b"
_COLLECTIVE = (
    r"\bnccl|\brccl|\bhccl|\bgloo\b|\bcollectives?\b|\ball[ _-]?reduce\w*|\ball[ _-]?gather\w*|"
    r"\breduce[ _-]?scatter\w*|\ball[ _-]?to[ _-]?all\w*|\bbroadcast\w*|\bbarrier\b|\bprocess ?group\w*|"
    # Accelerate's barrier (accelerate/state.py: wait_for_everyone calls torch.distributed.barrier())
    r"\bwait_for_everyone\b"
)
# the hang's words in Chinese titles: 卡住 / 卡死 / 卡在 / 卡着 (stuck), 挂起 (hung), 死锁 (deadlock)
_CJK_HANG = r"卡住|卡死|卡在|卡着|挂起|死锁"
# a collective named as the call a person pastes ("stuck at dist.barrier()", "Hang on
# torch.distributed.all_reduce", "hangs in accelerator.wait_for_everyone()"): the module path before it
# holds dots, which end a clause for _GAP, so the path is read as part of the name
_QUALIFIED = r"(?:[a-z_][\w]*\.)*"
# DistributedDataParallel and FSDP named for their collectives ("DDP hangs during validation", "FSDP stuck at
# backward"): read only where the title names no other waiter (a data loader's workers, a socket) and no
# loading, inference or start-up (_training_hang's exclusions)
_PARALLEL = r"\bddp\b|\bfsdp\d?\b|\bdistributed ?data ?parallel\b"
# a word's edge against ASCII letters only: in a Chinese title the hanzi beside a name are word characters to
# \b ("程序在all_reduce处卡住", "DDP训练卡住")
_EDGE = r"(?:(?<![A-Za-z0-9_])(?=[A-Za-z0-9_])|(?<=[A-Za-z0-9_])(?![A-Za-z0-9_]))"
_COLLECTIVE = _COLLECTIVE.replace(r"\b", _EDGE)
_PARALLEL = _PARALLEL.replace(r"\b", _EDGE)
_COLLECTIVE_HANG = lazy_re.compile(
    rf"(?i)(?:{_COLLECTIVE})(?:\(\))?{_GAP}(?:{_HANG}|{_CJK_HANG})|"
    rf"(?:{_HANG}|{_CJK_HANG}){_GAP}{_QUALIFIED}(?:{_COLLECTIVE})"
)
_PARALLEL_HANG = lazy_re.compile(
    rf"(?i)(?:{_PARALLEL}){_GAP}(?:{_HANG}|{_CJK_HANG})|(?:{_HANG}|{_CJK_HANG}){_GAP}(?:{_PARALLEL})"
)
# the GeForce RTX 40-series boards (Ada) where the number is a board: "RTX 4080 SUPER", "multiple 4090",
# "2x4090", "4卡4090", "4090 GPUs", "4090s"; not a bare number ("stuck at step 4090", "port 4090")
_ADA_NUM = r"40[6-9]0(?!\d)(?: ?ti\b| ?super\b|d\b)?"
_ADA = (
    rf"\brtx ?{_ADA_NUM}|"
    rf"(?:\b\d{{1,2}} ?[x×*] ?|\b(?:multiple|several|two|dual|four|eight|\d{{1,2}}) |"
    rf"[多双两四八\d]卡 ?){_ADA_NUM}|"
    rf"(?<![\d.:/-]){_ADA_NUM}(?: ?(?:gpus?|cards?|显卡)\b|s\b)"
)
_CJK_STUCK_TITLE = r"卡住|卡死|卡在"
_ADA_HANG = lazy_re.compile(
    rf"(?i)(?:{_ADA}){_GAP}(?:{_HANG}|{_CJK_STUCK_TITLE})|(?:{_HANG}|{_CJK_STUCK_TITLE}){_GAP}(?:{_ADA})"
)
# the end of the data: "in the end", "at the very end", "after the last batch", "at the end of epoch" (not the
# end of a set-up: "at the end of initialization")
_END = (
    r"\b(?:at|in|near|towards?) the (?:very )?end\b"
    r"(?! of (?:the )?(?:init\w*|set ?up|start\w*|launch\w*|load\w*))|"
    r"\b(?:after|at|on|in|during) the (?:last|final) (?:few )?(?:batch|iteration|step|epoch)(?:e?s)?\b|"
    r"\bat (?:the )?end of (?:an? |the |each |every )?"
    r"(?:epoch|training|train|loop|data|dataset|iteration)s?\b"
)
_END_HANG = lazy_re.compile(rf"(?i)(?:{_HANG}){_GAP}(?:{_END})|(?:{_END}){_GAP}(?:{_HANG})")
# training on several GPUs, nodes or machines, in English and in Chinese (多卡 / 多机 / 分布式 训练 / 微调)
_MULTI = r"(?:multi|multiple|several|\d+)[- ]?(?:gpus?|nodes?|cards?|machines?)"
_MULTI_TRAINING = (
    rf"(?:\b{_MULTI}|\bdistributed|\bddp|多卡|多机|多节点|分布式)\s*(?:[\w-]+\s+)?(?:training|train|"
    rf"fine-?tun\w*|训练|微调)|\b(?:training|train\w*|fine-?tun\w*)\s+(?:with|on|using|across)\s+{_MULTI}"
)
_TIMED_OUT = r"\btimed out\b|\btimes out\b|\btime ?out\b(?!s)|超时"
# a collective's timeout in a Chinese title ("NCCL 超时", "all_reduce超时", "dist.barrier() 超时报错"); the
# English words are vocabulary's collective-timeout row
_CJK_COLLECTIVE_TIMEOUT = lazy_re.compile(
    rf"(?i)(?:{_COLLECTIVE}|\bwatchdog\b)(?:\(\))?{_GAP}超时|超时{_GAP}{_QUALIFIED}(?:{_COLLECTIVE})"
)
_TRAINING_TIMEOUT = lazy_re.compile(
    rf"(?i)(?:{_MULTI_TRAINING}){_GAP}(?:{_TIMED_OUT})|(?:{_TIMED_OUT}){_GAP}(?:{_MULTI_TRAINING})"
)
# training on several GPUs, nodes or machines that hangs, in a person's words: the training named
# ("多卡训练卡住",
# "DDP training freezes after a few epochs") or the job hanging on several devices ("Marian hangs on multiple
# GPUs", "Training stuck when using 4 GPUs"); the hang's words in English and in Chinese (卡住 / 卡死 / 卡在)
_CJK_STUCK_WORDS = r"卡住|卡死|卡在"
_ON_MULTI = rf"\b(?:on|with|using|across|over)\s+(?:the\s+|all\s+|my\s+)?{_MULTI}"
# and the misspellings of "stuck" a title keeps ("stucked", "Struk during training on multi-GPUs")
_STUCK_SPELT = r"\bstuck?ed\b|\bstr?uk\b"
_TRAINING_HANG = lazy_re.compile(
    rf"(?i)(?:{_MULTI_TRAINING}){_GAP}(?:{_HANG}|{_STUCK_SPELT}|{_CJK_STUCK_WORDS})|"
    rf"(?:{_HANG}|{_STUCK_SPELT}|{_CJK_STUCK_WORDS}){_GAP}(?:{_MULTI_TRAINING}|{_ON_MULTI})"
)
# what hangs there is not the training's collectives: a server or inference, the model's loading or compiling,
# the set-up of the process group ("stuck in dist_util.setup_dist() when trying multiGPUs training"), the data
# loader's workers, a value that no longer moves
_NOT_TRAINING = lazy_re.compile(
    r"(?i)\binferenc\w*|\bserv(?:e|er|ing)\b|\bvllm\b|\bgenerat\w*|\bload\w*|\bcompil\w*|setup\w*|"
    r"\binit\w*|workers?\b|推理|加载|初始化|"
    # a number that stays ("Loss stuck at 0.69 on multiple GPUs"): the model's, not the job's
    r"\b(?:loss|accuracy|acc|metrics?|map|lr|learning rate|gradients?|grad norm)\b|"
    r"\bstuck at (?:-?\d|nan|zero)"
)
# a hang that comes when one rank alone meets a condition of its data ("The SyncBatchNorm function will stop,
# when one of multi-GPU run into "no valid points"", "Training hangs when one of the GPUs gets an empty
# batch", "训练卡住，当某张卡没有数据时"): that rank took another path (skipped the forward, the loss, the
# backward) and the others wait in a collective it never joins: the ranks disagree, RUN201. "Stop" says a hang
# here only beside that clause. A rank that dies, runs out of memory or fails is that failure's, not read.
_ONE_RANK = (
    r"\b(?:when|if|once|after|whenever)\s+(?:only\s+)?one\s+(?:of\s+(?:the\s+|my\s+|our\s+)?(?:multi-?)?)?"
    r"(?:gpus?|ranks?|process(?:es)?|nodes?|workers?|cards?|devices?|replicas?)\b|"
    r"(?:当|如果|若)?(?:某(?:一)?(?:张|个)?|其中一(?:张|个))(?:卡|gpu|GPU|rank|进程|节点)"
)
# "stop" as what the job does ("will stop", "it stops"), not a request ("Stop training when ...")
_STOP = r"\b(?:will|would|then|just|suddenly|simply|it|training|job|process)\s+stop\b|\bstop(?:s|ped)\b"
_ONE_RANK_HANG = lazy_re.compile(
    rf"(?i)(?:{_HANG}|{_STOP}|{_CJK_STUCK_WORDS}){_GAP}[,，]?\s*(?:{_ONE_RANK})|"
    rf"(?:{_ONE_RANK}){_GAP}(?:{_HANG}|{_STOP}|{_CJK_STUCK_WORDS})"
)
_RANK_DIED = lazy_re.compile(
    r"(?i)\boom\b|out of memory|\bcrash\w*|\bdie[sd]?\b|\bdead\b|\bkill\w*|\berror\w*|\bexception|"
    r"\bfail\w*|segfault|\bexit\w*|显存|崩溃|报错|挂掉"
)
# a question about the report after it ("... How to solve it?"): not the title's own words
_TRAILING_QUESTION = lazy_re.compile(r"(?i)[.?!。？]\s*(?:how|any|why|what|is there|anyone)\b.*$|[?？]\s*$")
# a person's mark that the log hangs there, on a line of its own; NCCL's lines of a communicator that came up
_MARK = lazy_re.compile(
    r"(?i)^\s*[*(<\[_~-]*\s*(?:(?:it|the job|the program|the process|training|then|and)\s+)?"
    r"(?:hangs?|hung|hanging|stuck|freezes|deadlocks?)"
    r"(?:\s+(?:here|there|forever|indefinitely|at this point))?"
    r"\s*(?:\.{2,}|…|!+)?\s*[*)>\]_~-]*\s*$|"
    r"^\s*[*(<\[_~（-]*\s*(?:然后|程序|训练)?(?:卡住|卡死|卡在这里|卡在这)了?\s*(?:\.{2,}|…|。)?\s*[*)>\]_~）-]*\s*$"
)
_NCCL_UP = lazy_re.compile(
    r"\bINFO (?:Ring \d+|Channel \d+|Trees?\b|Launch mode|Connected all|\d+ coll channels|.*\bInit COMPLETE|"
    r".*\bInit done)"
)
# a timeout that names another waiter than a collective: a socket, a store, a loader, a download
_OTHER_WAIT = lazy_re.compile(
    r"(?i)socket|\bstore\b|\bclient|data ?loader|\bworker|download|\bhttp|request|\bssh\b|\bhub\b"
)
# a hang that could happen, or that a change avoids: a warning or a fix, not a report
_MAY = lazy_re.compile(
    r"(?i)\b(?:may|might|can|could|would|potentially|possibly|avoid\w*|prevent\w*|fix\w*|resolv\w*|"
    r"solv\w*|workaround|detect\w*|debug\w*|diagnos\w*)\b"
)


# a hang in the job's start-up (the communicator's creation, the rendezvous): not a collective's
_STARTUP = lazy_re.compile(
    r"(?i)\binit\w*|\bbootstrap\w*|\bstart[ -]?up\b|\bconnect\w*|\brendezvous\b|\bcomm ?init\w*|"
    r"\bcommunicator creation|\bset ?up\b|\blaunch mode\b|\buniqueid\b|\bnew_group\b"
)


# the start-up in Chinese titles (初始化 init, 启动 launch, 连接 connect, 握手 handshake): "初始化 NCCL 超时"
_CJK_STARTUP = lazy_re.compile(r"初始化|启动|连接|握手|建立通信")


def _read(hit: Hit) -> bool:
    text = hit.text
    return _title(hit) and not _TITLE_ASIDE.search(text) and not _MAY.search(text)


def _end_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit):
        return None
    return [
        row.event(
            hit,
            f'the report names a hang at the end of the data ("{m.group(0)}"): one rank ran out of batches '
            "and left the loop (or entered a barrier) while the others wait in a collective it never joins",
            {"kind": "uneven_inputs", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "uneven_inputs"),
        )
    ]


def _ada_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit) or _STARTUP.search(hit.text) or _OTHER_WAIT.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names a hang on GeForce RTX 40-series GPUs ("{m.group(0)}"): those boards have no '
            "working peer-to-peer, and drivers before 525.105 reported it anyway, so NCCL's P2P transport "
            "never completes the first collective: set NCCL_P2P_DISABLE=1 or update the driver",
            {"kind": "p2p_reported_but_broken", "gpu": "GeForce RTX 40-series", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "p2p_reported_but_broken"),
        )
    ]


def _collective_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit) or _STARTUP.search(hit.text) or _CJK_STARTUP.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names a collective that hangs ("{m.group(0)}"): a collective that never completes, '
            "what the process group's watchdog reports as a timeout",
            {"kind": "collective_hang", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, hit.rank, "collective_hang"),
        )
    ]


def _parallel_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not _read(hit) or _STARTUP.search(text) or _OTHER_WAIT.search(text) or _NOT_TRAINING.search(text):
        return None
    return _collective_hang(row, hit, m)


def _training_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if not _read(hit) or _STARTUP.search(hit.text) or _OTHER_WAIT.search(hit.text):
        return None
    return [
        row.event(
            hit,
            f'the report names a timeout of multi-GPU training ("{m.group(0)}"): in a running job that is '
            "the process group's watchdog, a collective that some rank never joined",
            {"kind": "training_timeout", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, hit.rank, "collective_hang"),
        )
    ]


def _collective_timeout(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    if (
        not _read(hit)
        or _STARTUP.search(hit.text)
        or _CJK_STARTUP.search(hit.text)
        or _OTHER_WAIT.search(hit.text)
    ):
        return None
    return [
        row.event(
            hit,
            f'the report names a collective that timed out ("{m.group(0)}"): the process group\'s watchdog '
            "ended a collective that some rank never joined or never completed",
            {"kind": "collective_timeout", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, hit.rank, "collective_hang"),
        )
    ]


def _training_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text
    if not _read(hit) or _STARTUP.search(text) or _OTHER_WAIT.search(text) or _NOT_TRAINING.search(text):
        return None
    return [
        row.event(
            hit,
            f'the report names training on several GPUs that hangs ("{m.group(0)}"): in a running job '
            "that is a collective some rank never joined or never completed, what the process group's "
            "watchdog reports as a timeout",
            {"kind": "training_hang", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, hit.rank, "collective_hang"),
        )
    ]


def _one_rank_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = _TRAILING_QUESTION.sub("", hit.text)
    if not _title(hit) or _TITLE_ASIDE.search(text) or _MAY.search(text) or _RANK_DIED.search(text):
        return None
    if _STARTUP.search(text) or _NOT_TRAINING.search(text):
        return None
    return [
        row.event(
            hit,
            f'the report names a hang that comes when one rank alone meets a condition ("{m.group(0)}"): '
            "that rank took another path (skipped a forward, a loss or a backward) and the others wait in a "
            "collective it never joins",
            {"kind": "one_rank_diverged", "inferred_from": "title", "read_as": "title"},
            tier=1,
            dedupe=(row.code, "one_rank_diverged"),
        )
    ]


def _marked_hang(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    above = [ln.text for ln in hit.before(3, same_rank=False) if ln.text.strip()]
    if not above or not _NCCL_UP.search(above[-1]):
        return None
    return [
        row.event(
            hit,
            f'the paste marks that the job hangs ("{m.group(0).strip()}") right after NCCL\'s communicator '
            "came up: the first collective never completed (a rank that never joined it, or a transport that "
            "never delivers)",
            {"kind": "collective_hang", "inferred_from": "mark", "after": above[-1].strip()[:200]},
            tier=1,
            dedupe=(row.code, hit.rank, "collective_hang"),
        )
    ]


_CJK_STUCK = ("卡住", "卡死", "卡在")
_CJK_HANGS = (*_CJK_STUCK, "卡着", "挂起", "死锁")
_ANCHORS = (b" hang", b"Hang", b"HANG", b" hung", b"stuck", b"Stuck", b"eadlock", b"reez")
_WORTH = (rb"(?i:\bhang|\bhung\b|\bstuck\b|deadlock|\bfreez)",)
_WORDS = ("hang", "hung", "stuck", "deadlock", "freez")

SIGNATURES = (
    Signature(
        "title: a hang at the end of the data",
        _END_HANG,
        _end_hang,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=_ANCHORS,
        worth=_WORTH,
        words=_WORDS,
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "Training hangs in the end while calling dist.barrier()",
            "DDP stuck after the last batch of the epoch",
        ),
    ),
    Signature(
        "title: a hang on geforce rtx 40-series gpus",
        _ADA_HANG,
        _ada_hang,
        C.GPU_P2P_BROKEN_BY_PLATFORM.code,
        tier=1,
        anchors=(*_ANCHORS, *(w.encode() for w in _CJK_STUCK)),
        worth=(*_WORTH, *(w.encode() for w in _CJK_STUCK)),
        words=(*_WORDS, *_CJK_STUCK),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "Deadlock in distribution with multiple 4090",
            "NCCL hangs on 2x RTX 4090",
            "多卡4090训练卡住",
        ),
    ),
    Signature(
        "title: a hang when one rank alone meets a condition",
        _ONE_RANK_HANG,
        _one_rank_hang,
        C.COLLECTIVE_MISMATCH.code,
        tier=1,
        anchors=(*_ANCHORS, b" stop", b"Stop", *(w.encode() for w in _CJK_STUCK)),
        worth=(*_WORTH, rb"(?i:\bstop)", *(w.encode() for w in _CJK_STUCK)),
        words=(*_WORDS, "stop", *_CJK_STUCK),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "Training hangs when one of the GPUs gets an empty batch",
            "SyncBatchNorm will stop when one of multi-GPU has no valid points",
        ),
    ),
    Signature(
        "title: a collective hangs",
        _COLLECTIVE_HANG,
        _collective_hang,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(*_ANCHORS, *(w.encode() for w in _CJK_HANGS)),
        worth=(*_WORTH, *(w.encode() for w in _CJK_HANGS)),
        words=(*_WORDS, *_CJK_HANGS),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "NCCL hang on socket recv()",
            "all reduce hangs (NCCL 2.8.0.3)",
            "Deadlock in all_gather with 8 GPUs",
            "Training stuck at dist.barrier()",
            "程序在all_reduce处卡住",
        ),
    ),
    Signature(
        "title: multi-gpu training hangs",
        _TRAINING_HANG,
        _training_hang,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(*_ANCHORS, b"stuk", b"Stuk", b"struk", b"Struk", *(w.encode() for w in _CJK_STUCK)),
        worth=(*_WORTH, rb"(?i:\bstr?uk\b)", *(w.encode() for w in _CJK_STUCK)),
        words=(*_WORDS, "stuk", "struk", *_CJK_STUCK),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=(
            "Marian hangs on multiple GPUs",
            "多卡训练卡住",
            "Multi-node training freezes",
            "Struk during training on multi-GPUs",
        ),
    ),
    Signature(
        "title: ddp or fsdp hangs",
        _PARALLEL_HANG,
        _parallel_hang,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(*_ANCHORS, *(w.encode() for w in _CJK_HANGS)),
        worth=(*_WORTH, *(w.encode() for w in _CJK_HANGS)),
        words=(*_WORDS, *_CJK_HANGS),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=("DDP hangs during validation", "FSDP stuck at backward", "DDP训练卡住"),
    ),
    Signature(
        "a person's mark that it hangs after nccl came up",
        _MARK,
        _marked_hang,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(
            b"hang",
            b"Hang",
            b"HANG",
            b"hung",
            b"stuck",
            b"Stuck",
            b"freezes",
            b"eadlock",
            *(w.encode() for w in _CJK_STUCK),
        ),
        worth=(rb"(?i:hang|hung|stuck|freezes|deadlock)", *(w.encode() for w in _CJK_STUCK)),
        words=("hang", "hung", "stuck", "freez", "deadlock", *_CJK_STUCK),
        anchor_from="the hang's word in its usual spellings (case aside)",
        examples=("*hangs*", "(stuck here)", "卡住了"),
    ),
    Signature(
        "title: a collective times out in chinese",
        _CJK_COLLECTIVE_TIMEOUT,
        _collective_timeout,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=("超时".encode(),),
        words=("超时",),
        anchor_from="超时, the timeout's word in Chinese",
        examples=("NCCL 超时", "all_reduce超时", "训练时 dist.barrier() 超时报错"),
    ),
    Signature(
        "title: multi-gpu training times out",
        _TRAINING_TIMEOUT,
        _training_timeout,
        C.WATCHDOG_TIMEOUT.code,
        tier=1,
        anchors=(b"imeout", b"imed out", b"imes out", b"ime out", b"IMEOUT", "超时".encode()),
        worth=(rb"(?i:timeout|timed out|times out|time out)", "超时".encode()),
        words=("timeout", "timed out", "times out", "time out", "超时"),
        anchor_from="the timeout's word in its usual spellings (case aside)",
        examples=("多卡训练超时问题", "Timeout in multi-node training", "DDP training times out"),
    ),
)
parse = gated_reader(SIGNATURES)

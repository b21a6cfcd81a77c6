"""Error lines no family module reads, classified by the words a failure of each class uses.

Every fresh set of real logs brings families from stacks the rules never met (HCCL on Ascend,
Paddle, JAX's gRPC coordination, ps-lite, vendor runtimes): most of their misses were silence,
although the line said in plain words what happened ("... times out", "Connection reset",
"out of memory on device"). This module is the net under the families: a line that says it failed
(an error marker) and names what failed in the vocabulary of one root-cause class becomes a
finding of that class's most general code, marked `facts["inferred_from"] = "words"`.

It is the last reader before the bare Python exception (pyexc), and it yields to every family:
- a line a row of another module owns (its pattern matches and its build takes the line) is that
  module's, even when the module decided it is no failure (a retry that later worked, a configuration
  print): never read here. A line a row declined (its build said None: another stack's) is open;
- its events are tier 1 and rank after a recognised failure of the same tier (causality treats
  them like a bare exception), so a log where any family fires is decided by that family.
The vocabularies are words of the failure, not of one message: each needs two parts on the line
(what failed and how), so that a healthy log's "timeout=1800" or "allreduce" alone stays quiet.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit
from pgdoctor.diagnose.signature import Build, Signature, read
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# The line says something failed: an error word, a C++ check, an abort, or a vendor error code
# (CANN's EI0002 / EE1002 / EL0001, ERR00100; glog's E1204 prefix).
_FAILED = lazy_re.compile(
    r"\bwhat\(\):|[a-z](?:Error|Exception)\b|"
    r"(?i:\b(?:error|errors|err|failed|failure|fail|fatal|abort(?:ed|ing)?|exception|"
    r"check failed|check notnull|non-ok-status|timed out|times out|unavailable|deadline[ _]?exceeded|"
    r"killed)\b)|"
    # the marker in a Chinese, Japanese or Korean writer's words ("DDP模式报错", "出错了", "エラー", "오류"),
    # unless denied ("不报错", "没有报错", "不会出错", "不再报错": no error, or no more)
    r"(?<!不)(?<!没)(?<!無)(?<!无)(?<!未)(?<!不会)(?<!没有)(?<!不再)(?<!没再)(?:报错|報錯|出错|出錯|错误|錯誤|エラー|오류|에러)|"
    r"\b(?:[A-Z]{2}\d{4}|ERR\d{5})\b|^\s*E\d{4} \d|"
    # TensorFlow's and absl's logger: "2019-10-14 22:36:01.352450: E tensorflow/core/.../ring_alg.cc:279] ..."
    r":\d\d\.\d+: [EF] [\w/.-]+:\d+\]"
)
# Lines that report, not fail: INFO-level logger lines.
_INFO = lazy_re.compile(r"\bNCCL INFO\b|\bINFO\b|^\s*I\d{4} \d|\[I\]")
# A row of a status table (nvidia-smi -q, ibstat, npu-smi): "Uncorrectable Error    : 0" names a counter.
_TABLE_ROW = lazy_re.compile(r"^\s*[^:]{1,60}?\s{2,}:\s*[^\s:]{0,24}\s*$")
# Lines of other services and of the scheduler's own daemons: a download, a tracker, a registry or
# slurmstepd's message to its controller failing is not the job's interconnect (family modules read the
# scheduler records that matter: OOM kills, cancellations, node failures).
_OTHER_SERVICE = lazy_re.compile(
    r"https?://|HTTPS?ConnectionPool|requests\.exceptions|urllib|aiohttp|huggingface|wandb|mlflow|"
    r"\bs3://|\bgs://|^\s*(?:slurmstepd|srun|salloc|sbatch|slurmd|sshd)(?:\[\d+\])?:"
)
# A person's sentence about a failure, not the failure: messages of programs do not say "I" or "we".
_PROSE = lazy_re.compile(
    r"\b(?:I|I'm|I've|we|We|my|My|our|Our|you|You|your|Your|seems?|maybe|Maybe|sometimes|Sometimes|"
    r"thanks|Thanks|anyone|Anyone|last week|yesterday)\b"
)

_TIMED_OUT = (
    r"timed out|times out|time out|timeout (?:occurred|occurs|expired|exceeded|reached|error)|"
    r"(?:wait|sync|synchroni[sz]e|synchroni[sz]ation|execution|execute|operation|notify|event|task|"
    r"collective|communication|op)\s+timeout\b|deadline[ _]?exceeded|\bTIMEOUT\b"
)
_COLLECTIVE = (
    r"all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|barrier|collective|"
    r"\bhccl|\bnccl|\brccl|\bgloo|\bmpi\b|horovod|notify|pair_rank|\bstream|event.wait|heartbeat|"
    r"communicat\w*|\bcomm\b|process ?group|\bsend\b|\brecv\b"
)
_STARTUP = (
    r"rendezvous|\brdzv|registertask|coordination[ _]?service|coordinator|master_addr|master_port|"
    r"init_process_group|initgroupstage|root ?info|topo ?detect|topoinfo|tcpstore|\bstore\b|"
    r"jax\.distributed\.initialize|connect(?:ing)? to (?:the )?(?:master|server|coordinator|leader)|"
    # torch's exception of the store by its class name (torch.distributed.DistStoreError, 2.2+)
    r"diststore"
)
_REACH = (
    r"timed out|times out|timeout|deadline|refused|failed to connect|unable to connect|could not connect|"
    r"cannot connect|connect(?:ion)? (?:failed|error)|unreachable|error occur"
)
# Ranks that disagree about a collective: its shape, size, count or order differ between members.
_DIFFER = (
    # (not a state mismatch, the flight-recorder analyzer's COLLECTIVE_STATE_MISMATCH / "Expected state:
    # 'scheduled' does not match found state": a rank behind the others, not calls that differ)
    r"(?<!state_)(?<!state )mismatch|inconsistent|do(?:es)? not match(?! found state)|don't match|disagree|"
    r"different (?:shapes?|sizes?|number of|dtypes?|lengths?|counts?|order)"
)
_COLLECTIVE_OP = (
    r"all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|collective|\bhccl|\bnccl|\bgloo|"
    r"horovod|\bmpi\b|ring ?(?:reduce|gather)"
)
# A communicator used before it was made: the program's order of calls (usage), not the transport.
_UNINIT = r"not (?:been |yet )?initiali[sz]ed|uninitiali[sz]ed|before (?:calling )?init"
_COMMUNICATOR = r"co?m?municator|\bcomm\b|ring id|process ?group|default group|\bnccl|\bhccl|\bgloo|\brccl"
# A port the job's own server could not take (a parameter server, a scheduler, a store of another stack).
_IN_USE = r"address already in use|eaddrinuse|errno\W{0,3}98\b"
_BIND = r"\bbind|\blisten|\bport\b|server|scheduler|\bvan\b|socket|:\d{2,5}\b"
# A launch setting the job needs and did not get: the variables launchers and parameter servers read.
# (literal, what may follow it in the name): one list for the pattern, the row's anchors and its line test.
_DIST_VARS = (
    ("DMLC_", r"\w+"),
    ("MASTER_ADDR", ""),
    ("MASTER_PORT", ""),
    ("WORLD_SIZE", ""),
    ("LOCAL_RANK", ""),
    ("PADDLE_TRAINER", r"\w*"),
    ("HOROVOD_", r"\w+"),
    ("BYTEPS_", r"\w+"),
    ("JAX_COORDINATOR", r"\w*"),
    ("TF_CONFIG", ""),
)
_DIST_ENV = r"\b(?:" + "|".join(lit + rest for lit, rest in _DIST_VARS) + r")\b"
_UNSET = (
    r"notnull|not set|not found|not defined|missing|undefined|keyerror|must be (?:set|defined)|is required"
)
_NET = (
    r"connection refused|connection reset|connection abort|connection closed|broken pipe|no route to host|"
    r"network is unreachable|host is unreachable|socket operation on non-socket|transport endpoint|"
    r"connection timed out|failed to connect to all addresses|transport init error|create ?dest ?link|"
    r"retry count exceeded|ibv_\w+|\brdma\b|link (?:is )?down|peer (?:closed|disconnected)|"
    r"failed to (?:receive|send) message|socket (?:error|closed)"
)
# A distributed call the library refused: an operation, argument or tensor its backend does not take.
_REFUSED = (
    r"does not support|doesn't support|is not supported|not supported by|unsupported|invalid usage|"
    r"invalid argument"
)
_DIST_CALL = (
    r"process ?group|\bbackend\b|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|broadcast|barrier|"
    r"collective|\bhccl\b|\bnccl\b|\bgloo\b|\bmpi\b|horovod"
)
# Which connection: an errno alone ("RuntimeError: Connection reset by peer") could be any socket of any
# program; the line must name a transport, an address or a peer of the job.
_NET_CONTEXT = (
    r"socket|transport|\d+\.\d+\.\d+\.\d+|<\d+>|:\d{2,5}\b|\bzmq|\bgloo|\bnccl|\bhccl|\brccl|\bmpi|\bucx|"
    r"grpc|\bib\b|rdma|verbs|mlx\d|\brank|connect\(\)|\brecv|\bsend|dest ?link|\bpair\b|"
    # the fabric by its name (a thread's title: "connection reset by peer, when using infiniband")
    r"infiniband|\broce\b"
)
# "not OOM", "no OOM", "without an OOM": a report that rules memory out (hpcaitech/ColossalAI#5039: "suddenly
# crash, not OOM, error log is : .../Indexing.cu:1141: indexSelectLargeIndex: ... Assertion `src").
_NOT = r"(?<!\bnot )(?<!\bno )(?<!\bnot an )(?<!\bnot a )(?<!\bwithout )(?<!\bwithout an )"
# "oom" as a counter that stayed at zero: fairseq's progress meter ("| oom 0 |", "oom=0", '"oom": "0"');
# not the kernel's OOM killer ("oom-kill", "oom_kill") nor a command's flag ("docker run --oom-kill-disable",
# "--oom-score-adj"): settings, not a report. Bounded by letters, not \b: "使用deepspeed后会OOM" (CJK is \w).
_OOM = r"(?<!--)(?<![a-z0-9_])oom(?![a-z0-9_])(?![-_ ]kill)(?![\"']?\s*[=:]?\s*[\"']?0(?:\.0+)?\b)"
# "out of memory" as people and programs spell it: hyphenated ("gives out-of-memory errors", "CUDA
# out-of-memory error with FSDP"), or with the memory named ("Ran out of GPU memory", "out of CUDA memory",
# "out of device memory", "out of video memory"); not the kernel's "out-of-memory killer" nor a cgroup's
# "out-of-memory handler", which are the host's.
_OUT_OF = (
    r"out(?: of |-of-)(?:(?:gpu|cuda|device|video|graphics|vram|hbm|npu|tpu|accelerator)(?:'s)? )?memory"
    r"(?![- _]?(?:kill|handler))"
)
_DEVICE_OOM = (
    r"(?=.*(?:" + _NOT + _OUT_OF + r"|" + _NOT + _OOM + r"|resource_exhausted|"
    r"memory (?:allocation )?(?:failed|exhausted)|"
    r"failed to allocate|insufficient (?:device )?memory))"
    # the device's name after a CJK word too ("还是会报GPU0 OUT OF MEMORY": no \b between 报 and G), by its
    # model ("with four Titanxp", "on 8xA100", "RTX 3090") or its card (单卡 / 多卡 / 显卡: one, several GPUs)
    r"(?=.*(?:cuda|(?<![a-z])gpu|device|\bhbm|(?<![a-z])npu|\bhip\b|\bxla|\btpu|vram|cudamalloc|aclrtmalloc|"
    r"\bnccl\b|\brccl\b|titan|geforce|quadro|tesla|(?<![a-z])[rg]tx ?\d|(?:(?<![a-z0-9])|(?<=\dx))[vah]100|"
    r"单卡|多卡|显卡))"
)
# A title names an OOM by the phase of training it struck in, without the device ('"out of memory" during
# validation', "OOM after first epoch", "out of memory in backward pass"): a trainer's allocator, unless the
# title names the host's memory or its killer.
_PHASE = (
    r"validat|evaluat|\beval\b|inference|\binfer|training|\btrain\b|\bepochs?\b|iteration|\bsteps?\b|"
    r"\bbatch|forward|backward|fine-?tun|finetun|predict|\btesting\b|deepspeed|\bzero-?[123]\b|\bfsdp\b|微调|训练"
)
_HOST = (
    r"kill|signal|\bram\b|\bcpu\b|\bhost\b|system memory|\bnode\b|shared memory|\bshm\b|swap|container|"
    r"\bpod\b|dataloader|worker|cgroup|slurm|srun|\bray\b|disk|heap|\bjava|\bjvm|spark|executor"
)
_PHASE_OOM = rf"(?!.*(?:{_HOST}))(?=.*(?:{_NOT}{_OUT_OF}|{_NOT}{_OOM}))(?=.*(?:{_PHASE}))"
_KILLED = (
    r"killed by signal:? (?:9|killed|sigkill)|signal: killed|\bsigkill\b|exited (?:with|due to) signal 9|"
    r"(?<!--)oom[-_ ]kill|out of memory: killed process|killed process \d+|"
    # the status a launcher or a shell reports: "return code = -9", "exit code -9", "exitcode: -9", "exit -9"
    r"(?:exit|return)[ _]?(?:code|status|value)\s*[=:]?\s*-9\b|\bexit(?:ed)? (?:with )?-9\b"
)
# A crash by a named fatal signal: Python's enum in a launcher's or a pool's report ("died with
# <Signals.SIGSEGV: 11>"), a handler's banner ("Signal 7 (SIGBUS) received"), a report of its receipt.
_CRASH_SIG = r"SIG(?:SEGV|BUS|ABRT|ILL|FPE)\b"
_CRASH = (
    rf"<Signals\.{_CRASH_SIG}: \d+>|\bsignal \d+ \({_CRASH_SIG}\) received|"
    rf"(?:received|caught|got|terminated (?:with|by)|killed by|died (?:with|of)|exited (?:with|due to)|"
    rf"crashed (?:with|by)) (?:a |the )?(?:signal:? )?(?:\d+ \()?{_CRASH_SIG}"
)
# A title that names the crash as the shell's strsignal() or a person says it ("Segmentation fault when
# using NCCL in MultiWorkerMirroredStrategy", "segfault in ncclCommInitRank", "Bus error (core dumped) with 8
# GPUs"), unless it denies or avoids one ("no segfault", "without a segmentation fault").
_TITLE_CRASH = (
    r"(?<!\bno )(?<!\bnot )(?<!\bwithout )(?<!\bwithout a )(?<!\bavoid )(?<!\bprevent )"
    r"(?:\bsegmentation fault\b|\bseg ?fault(?:s|ed)?\b|\bsigsegv\b|\bcore dumped\b|"
    r"\bbus error \(core dumped\)|\billegal instruction \(core dumped\))"
)
_TITLE_CRASH_ANCHORS: tuple[bytes, ...] = (b"egmentation fault", b"EGMENTATION FAULT", b"egfault", b"EGFAULT")
_TITLE_CRASH_ANCHORS += (b"eg fault", b"ore dumped", b"ORE DUMPED")
_HARDWARE = (
    r"device not found or invalid|device_absent|device\S* lost heartbeat|gpu (?:is )?lost|"
    r"fallen off the bus|uncorrectable (?:ecc|error)|hardware (?:error|failure|exception|fault)|"
    r"ecc error|device is abnormal|chip (?:error|fault)"
)
_PEER = r"peer access is not supported|peer access not supported|cannot enable peer access"
_ARCH = r"no kernel image is available|invalid device function|no binary for gpu"
_DRIVER = r"driver version is insufficient|insufficient driver|driver/library version mismatch"
# NCCL on Windows, where no PyTorch build has it (gloo only): a failure that names both is the platform's.
_WINDOWS = r"\bwindows\b|\bwin(?:10|11)\b"


def _both(what: str, how: str) -> re.Pattern[str]:
    # Anchored at the line's start: both lookaheads scan the whole line from there, so a match found at
    # any later start is found at 0 too. Unanchored, search() retried every start position and each
    # retry rescanned the rest of the line (quadratic: 2 ms a line on long healthy NCCL lines).
    return lazy_re.compile(rf"(?is)\A(?=.*(?:{what}))(?=.*(?:{how}))")


def _one(words: str) -> re.Pattern[str]:
    return lazy_re.compile(rf"(?i)(?:{words})")


# The rows of the family modules, in catalogue order: set once by the catalogue (rules/__init__.py), which
# imports this module and so cannot be imported from here.
_FAMILY_ROWS: tuple[Signature, ...] = ()


def bind_families(rows: tuple[Signature, ...]) -> None:
    """The catalogue names the rows this net yields to (every module's but this one's and pyexc's)."""
    global _FAMILY_ROWS
    _FAMILY_ROWS = rows


def _owned(hit: Hit) -> bool:
    """Whether a family row owns the line: its pattern matches and its build takes the line (a list,
    even an empty one, by the rows' contract: the family decided it is no failure, a retry that later
    worked, a print of settings). A build that says None declined a line of another stack: not owned."""
    for row in _FAMILY_ROWS:
        m = row.pattern.search(hit.text)
        if m is not None and row.build(row, hit, m) is not None:
            return True
    return False


def _build(kind: str, *, title: bool = False) -> Build:
    def build(row: Signature, hit: Hit, m: Any) -> Optional[list[Event]]:
        text = hit.text.strip()
        if title and _TITLE_ASIDE.search(text):
            return None
        facts = {"inferred_from": "words", "kind": kind, "line": clip(text, 300)}
        if title:
            facts["read_as"] = "title"
        return [
            row.event(
                hit,
                f"{hit.who()} reported a failure that no known message family reads; its words are those "
                f"of {kind}: {clip(text, 200)}",
                facts,
                dedupe=(row.code, hit.rank, kind),
            )
        ]

    return build


_KINDS: dict[str, str] = {}


def _row(
    name: str,
    pattern: re.Pattern[str],
    kind: str,
    code: str,
    anchors: tuple[bytes, ...],
    worth: bytes,
    example: str,
) -> Signature:
    _KINDS[f"words: {name}"] = kind
    return Signature(
        f"words: {name}",
        pattern,
        _build(kind),
        code,
        tier=1,
        anchors=anchors,
        worth=(worth,),
        anchor_from="the class's words, in any case: the anchors are their usual spellings",
        examples=(example,),
    )


# Most specific first: the device and the process fail before the transports they ran.
SIGNATURES = (
    _row(
        "hardware",
        _one(_HARDWARE),
        "a GPU or accelerator hardware fault",
        C.GPU_HW_EXCEPTION.code,
        (
            b"not found or invalid",
            b"Device_Absent",
            b"lost heartbeat",
            b"GPU is lost",
            b"fallen off the bus",
            b"ncorrectable",
            b"ardware",
            b"ECC",
            b"abnormal",
            b"hip error",
            b"hip fault",
        ),
        rb"(?i:not found or invalid|device_absent|lost heartbeat|gpu is lost|fallen off|uncorrectable|"
        rb"hardware|"
        rb"ecc error|abnormal|chip (?:error|fault))",
        "[PID: 1070] Device_Absent/Abnormal(EL0001): Device not found or invalid.",
    ),
    _row(
        "device oom",
        lazy_re.compile(r"(?is)\A" + _DEVICE_OOM),
        "device memory exhaustion",
        C.CUDA_OOM.code,
        (
            b"ut of memory",
            b"UT OF MEMORY",
            b"ut-of-memory",
            b"ut-Of-Memory",
            b"UT-OF-MEMORY",
            b"ut of GPU memory",
            b"ut of gpu memory",
            b"ut of CUDA memory",
            b"ut of cuda memory",
            b"ut of device memory",
            b"ut of video memory",
            b"OOM",
            b"RESOURCE_EXHAUSTED",
            b"emory allocation failed",
            b"ailed to allocate",
            b"nsufficient memory",
            b"nsufficient device memory",
            b"emory exhausted",
        ),
        rb"(?i:out[- ]of[- ](?:\w+ )?memory|\boom\b|resource_exhausted|memory allocation failed|"
        rb"failed to allocate|insufficient (?:device )?memory|memory exhausted)",
        "E0101 12:00:00.0 xla: RESOURCE_EXHAUSTED: Out of memory allocating 123 bytes on device 0",
    ),
    # The same exhaustion in the words of a Chinese, Japanese or Korean writer (a title, or torch's
    # message translated: "内存溢出错误：CUDA 内存不足。尝试分配 108.00 MiB 的内存"): "显存" is the
    # GPU's memory itself; "内存" (memory) only next to CUDA / GPU.
    _row(
        "device oom in cjk words",
        lazy_re.compile(
            # the GPU memory's use named between ("显存占用明显溢出了": its use clearly overflowed), in one
            # clause, not denied and not a rate ("显存利用率不足": low utilisation)
            r"(?s)\A(?=.*(?:显存[^，。,.;；！？!?\s没未无不率]{0,8}?(?:不足|溢出|不够|耗尽|爆)|爆显存|"
            r"(?:CUDA|GPU|cuda|gpu) ?(?:内存不足|内存溢出)|"
            r"(?:GPU|VRAM) ?メモリ不足|VRAM ?不足|GPU ?메모리 부족))"
        ),
        "device memory exhaustion",
        C.CUDA_OOM.code,
        tuple(w.encode() for w in ("显存", "内存不足", "内存溢出", "メモリ不足", "VRAM", "메모리 부족")),
        "(?:显存|内存不足|内存溢出|メモリ不足|VRAM ?不足|메모리 부족)".encode(),
        "CUDA 内存不足。尝试分配 108.00 MiB 的内存",
    ),
    Signature(
        "words: oom in a training phase",
        lazy_re.compile(r"(?is)\A" + _PHASE_OOM),
        lambda row, hit, m: _build("device memory exhaustion")(row, hit, m) if _title(hit) else None,
        C.CUDA_OOM.code,
        tier=1,
        anchors=(b"ut of memory", b"ut Of Memory", b"UT OF MEMORY", b"ut-of-memory", b"ut-Of-Memory", b"OOM"),
        worth=(rb"(?i:out[- ]of[- ](?:\w+ )?memory|\boom\b)",),
        anchor_from="the class's words, in any case: the anchors are their usual spellings",
        examples=('"out of memory" during validation',),
    ),
    _row(
        "killed",
        _one(_KILLED),
        "a process killed by SIGKILL",
        C.HOST_OOM_KILLED.code,
        (
            b"illed",
            b"ILLED",
            b"SIGKILL",
            # a title retyped with the signal's name in lower case ("多卡微调遇到sigkill 无报错退出")
            b"sigkill",
            b"Sigkill",
            b"SigKill",
            b"ignal 9",
            b"oom-kill",
            b"oom_kill",
            b"oom kill",
            b"ode -9",
            b"ode = -9",
            b"ode: -9",
            b"ode=-9",
            b"tatus -9",
            b"tatus: -9",
            b"xit -9",
            b"xited -9",
            b"xited with -9",
        ),
        rb"(?i:killed|sigkill|signal 9|oom[-_ ]kill|(?:code|status|exit|exited|with)\s*[=:]?\s*-9\b)",
        "SystemError: (Fatal) DataLoader process (pid 10222) exited is killed by signal: Killed.",
    ),
    _row(
        "crash signal",
        _one(_CRASH),
        "a process that died of a fatal signal",
        C.FATAL_SIGNAL.code,
        # the signal's name as the shell's strsignal() or a person says it, read in a title alone
        (b"SIGSEGV", b"SIGBUS", b"SIGABRT", b"SIGILL", b"SIGFPE", *_TITLE_CRASH_ANCHORS),
        rb"SIG(?:SEGV|BUS|ABRT|ILL|FPE)\b|(?i:segmentation fault|seg ?fault|core dumped)",
        "An error : <Signals.SIGSEGV: 11>",
    ),
    _row(
        "peer access",
        _one(_PEER),
        "a peer-access refusal",
        C.PEER_ACCESS_UNSUPPORTED.code,
        (b"eer access",),
        rb"(?i:peer access)",
        "error: peer access is not supported between these two device",
    ),
    _row(
        "arch",
        _one(_ARCH),
        "a binary built for another GPU architecture",
        C.ARCH_UNSUPPORTED.code,
        (b"no kernel image", b"nvalid device function", b"no binary for gpu", b"NoBinaryForGpu"),
        rb"(?i:no kernel image|invalid device function|no binary for gpu)",
        "HIP error: invalid device function",
    ),
    _row(
        "driver",
        _one(_DRIVER),
        "a driver too old for the runtime",
        C.DRIVER_TOO_OLD.code,
        (b"river version is insufficient", b"nsufficient driver", b"river/library version mismatch"),
        rb"(?i:driver version is insufficient|insufficient driver|driver/library version mismatch)",
        "failed call to cuInit: CUDA_ERROR_INSUFFICIENT_DRIVER: insufficient driver version",
    ),
    _row(
        "nccl on windows",
        _both(_WINDOWS, r"\bnccl\b"),
        "NCCL asked of a Windows build of PyTorch, which has none",
        C.LIBRARY_MISSING.code,
        (b"indows", b"INDOWS", b"in10", b"in11"),
        rb"(?i:windows|win1[01])",
        "Using Mulit-GPU in windows system with NCCL error",
    ),
    _row(
        "start-up",
        _both(_STARTUP, _REACH),
        "a start-up exchange that never completed",
        C.RENDEZVOUS_TIMEOUT.code,
        (
            b"imed out",
            b"IMED OUT",
            b"imes out",
            b"imeout",
            b"IMEOUT",
            b"eadline",
            b"EADLINE",
            b"efused",
            b"to connect",
            b"nreachable",
            b"rror occur",
            b"RROR occur",
            b"onnect failed",
            b"onnection failed",
            b"onnection error",
            b"onnect error",
        ),
        rb"(?i:timed out|times out|timeout|deadline|refused|to connect|unreachable|error occur|"
        rb"connect(?:ion)? (?:failed|error))",
        "E1204 xla/pjrt/distributed/client.cc:96] Coordination service agent in error status: "
        "DEADLINE_EXCEEDED: RegisterTask timed out",
    ),
    _row(
        "port in use",
        _both(_IN_USE, _BIND),
        "a port the job's own server could not take",
        C.ADDRESS_IN_USE.code,
        (b"lready in use", b"EADDRINUSE", b"rrno = 98", b"rrno 98", b"rrno: 98"),
        rb"(?i:already in use|eaddrinuse|errno\W{0,3}98\b)",
        "src/./zmq_van.h:121: Reached max retry for bind: Address already in use. errno = 98",
    ),
    _row(
        "launch setting missing",
        _both(_DIST_ENV, _UNSET),
        "a launch setting the job did not get",
        C.RENDEZVOUS_CONFIG.code,
        tuple(lit.encode() for lit, _ in _DIST_VARS),
        "|".join(lit for lit, _ in _DIST_VARS).encode(),
        "MXNetError: [06:04:43] src/postoffice.cc:18: Check  notnull: "
        'Environment::Get()->find("DMLC_NUM_SERVER")',
    ),
    _row(
        "collective mismatch",
        _both(_DIFFER, _COLLECTIVE_OP),
        "ranks that disagree about a collective",
        C.COLLECTIVE_MISMATCH.code,
        (b"ismatch", b"nconsistent", b"not match", b"t match", b"isagree", b"ifferent"),
        rb"(?i:mismatch|inconsistent|not match|t match|disagree|different)",
        "InternalError: Shape mismatch in the collective instance 100. Op at device "
        "/job:worker/replica:0/task:1/device:GPU:0 expected shape [8] but another member in the group "
        "expected shape [4]",
    ),
    _row(
        "communicator used before init",
        _both(_UNINIT, _COMMUNICATOR),
        "a communicator used before it was initialised",
        C.NCCL_INVALID_USAGE.code,
        (b"nitialized", b"nitialised", b"before init", b"before calling init"),
        rb"(?i:initiali[sz]ed|before (?:calling )?init)",
        "Error: comunicator of ring id 1 has not been initialized",
    ),
    _row(
        "refused call",
        _both(_REFUSED, _DIST_CALL),
        "a distributed call its backend refused",
        C.NCCL_INVALID_USAGE.code,
        (b"not support", b"n't support", b"nsupported", b"nvalid usage", b"nvalid argument"),
        rb"(?i:not support|n't support|unsupported|invalid usage|invalid argument)",
        "RuntimeError: ProcessGroupHCCL does not support alltoall_base with uneven splits",
    ),
    _row(
        "collective timeout",
        _both(_TIMED_OUT, _COLLECTIVE),
        "a collective that timed out",
        C.WATCHDOG_TIMEOUT.code,
        (
            b"imed out",
            b"IMED OUT",
            b"imes out",
            b"ime out",
            b"imeout",
            b"IMEOUT",
            b"EADLINE_EXCEEDED",
            b"eadline exceeded",
            b"eadline Exceeded",
            b"eadlineExceeded",
            b"atchdog",
            b"iming out",  # a title's progressive form ("NCCL allreduce is timing out"), read by _TITLE_WORDS
        ),
        rb"(?i:timed out|times out|time out|timeout|timing out|deadline[ _]?exceeded)",
        "EI0002: The wait execution of the Notify register times out. tag[AllReduce_192.168.0.116]",
    ),
    _row(
        "network",
        _both(_NET, _NET_CONTEXT),
        "a connection between processes that failed",
        C.NCCL_SOCKET_ERROR.code,
        (
            b"onnection",
            b"ONNECTION",
            b"roken pipe",
            b"o route to host",
            b"s unreachable",
            b"non-socket",
            b"ransport endpoint",
            b"ransport init error",
            b"DestLink",
            b"Dest link",
            b"etry count exceeded",
            b"ibv_",
            b"ink down",
            b"ink is down",
            b"eer closed",
            b"eer disconnected",
            b"o receive message",
            b"o send message",
            b"ocket error",
            b"ocket closed",
        ),
        rb"(?i:connection (?:refused|reset|abort|closed|timed out)|connect to all|broken pipe|"
        rb"no route to host|unreachable|non-socket|transport endpoint|"
        rb"transport init error|dest ?link|retry count exceeded|ibv_|link (?:is )?down|peer closed|"
        rb"peer disconnected|to receive message|to send message|socket error|socket closed)",
        "socketStartConnect: Connect to 10.45.234.83<47527> failed : Software caused connection abort",
    ),
)


def _title(hit: Hit) -> bool:
    """Whether the paste is one short line in a person's words, not a program's: a thread's title. Titles
    name a device's memory exhaustion without the program's error marker ("Cuda out of memory in
    validation", "[Bug] GPU OOM with FSDP"), and no healthy line says those words of a device, so the device
    OOM row reads a title without the marker. The other classes' words are in healthy one-line prints too
    ("Communicator not initialized yet, initializing it lazily", "TIMEOUT(ms): 1800000"): a title is read
    for them only by `_TITLE_WORDS` below. A how-to question or a feature request names a setting, not a
    failure."""
    return len(hit.lines) == 1 and len(hit.text) <= _TITLE_MAX and not _ASKING.match(hit.text)


def _head_title(hit: Hit) -> bool:
    """Whether the line is a thread's title pasted as the first line above its log ("CUDA OUT OF MEMORY with
    dist_train.sh", then the launcher's banner and a traceback): short, without a program's prefix, and
    the paste's first line. Read for the device's memory alone, whose words no healthy line says."""
    ln = hit.line
    return ln.no == 1 and len(hit.lines) > 1 and ln.rank is None and _title_shape(hit.text)


def _title_shape(text: str) -> bool:
    return len(text) <= _HEAD_MAX and not (_ASKING.match(text) or _LOGGED.search(text) or _GONE.search(text))


def _head_rows(hit: Hit) -> tuple[Signature, ...]:
    return _HEAD_TITLE_SIGNATURES if _head_title(hit) else ()


_HEAD_MAX = 120
# a line that says the failure went away or did not happen ("设置之后不再报错 GPU out of memory，训练正常": no
# more errors after the setting, training is normal; "没有报错，... 的提示也没有了": the message is gone too)
_GONE = lazy_re.compile(
    r"不再|没再|没有了|消失|正常|已解决|解决了|(?i:\b(?:no longer|went away|gone|fixed|solved|resolved)\b)"
)
# a program's record, not a person's title: a timestamp, a level, a source location, a key=value
_LOGGED = lazy_re.compile(r"\d\d:\d\d:\d\d|\b(?:INFO|WARNING|WARN|DEBUG)\b|\.(?:py|cc|cpp|h):\d|\w=\S")
_TITLE_MAX = 240
_ASKING = lazy_re.compile(
    r"(?i)\s*(?:\[[^\]]{0,40}\]:?\s*)*(?:how (?:to|do|can|should|does)|is (?:it|there)|can (?:i|we|you)|"
    r"what is|feature|question|support|add|allow|enable|expose|make)\b"
)
_TITLE_ROWS = ("words: device oom", "words: device oom in cjk words", "words: oom in a training phase")

# The other classes in a title: their words next to each other, what failed within a few words of how it
# failed and in one clause ("NCCL Connection refused when run horovod", "Watchdog caught collective operation
# timeout when training", "`DistStoreError` timeout during initialization", "nccl timeout on train.py"),
# where a healthy one-line print or a sentence that merely holds both words ("set the NCCL timeout to 2 h
# for the allreduce") keeps them apart; the killed and crash rows' words are such pairs already. A title
# that names a setting, a retry or a request ("NCCL timeout should be configurable", "timeout=1800",
# "Connection refused, retrying") is not read for them.
_GAP = r"[^.;:!?,()\[\]=\n。，；：！？]{0,32}?"


def _near(what: str, how: str) -> re.Pattern[str]:
    return lazy_re.compile(rf"(?i)(?:{what}){_GAP}(?:{how})|(?:{how}){_GAP}(?:{what})")


# (and a title's progressive form, "NCCL allreduce is timing out"; DDP/FSDP named for their collectives)
_TIMEOUT_WORD = r"\btimed out\b|\btimes out\b|\btiming out\b|\btime ?out\b(?!s)|deadline[ _]?exceeded"
_TITLE_STARTUP = rf"{_STARTUP}|\bc10d\b"
_TITLE_REACH = (
    rf"{_TIMEOUT_WORD}|\brefused\b|(?:failed|unable|could not|cannot|can't) (?:to )?connect|"
    r"connect(?:ion)? (?:failed|error)"
)
_TITLE_COLLECTIVE = (
    r"nccl|rccl|hccl|\bgloo|\bcollective|all_?reduce|all_?gather|reduce_?scatter|all_?to_?all|\bbroadcast|"
    r"\bbarrier|watchdog|processgroup\w*|\bcommunication|\bddp\b|\bfsdp\d?\b"
)
# a transport of the job, not a server: a refused connection to a store or a master is the start-up's
_TITLE_TRANSPORT = (
    r"nccl|rccl|hccl|\bgloo|\bmpi\b|horovod|\bucx\b|\bib\b|infiniband|\broce\b|rdma|\branks?\b|"
    r"\bpair\.cc|connectfullmesh"
)
_TITLE_NET = (
    r"connection (?:refused|reset|closed|abort\w*|timed out)|broken pipe|no route to host|"
    r"(?:network|host) is unreachable"
)
_TITLE_ASIDE = lazy_re.compile(
    r"(?i)\w_timeout|timeout_\w|\btimeout\s*(?:\(\w+\))?\s*[=:]\s*\d|"
    r"\btime ?out (?:(?:of|to|in|is|was|at|=) )?(?:\d|seconds?\b|secs?\b|minutes?\b|mins?\b|hours?\b|ms\b)|"
    r"\btime ?out (?:value|values|setting|settings|parameter|option|argument|flag|variable|config\w*|is set|"
    r"set)\b|\b(?:set|setting|increase|increasing|raise|raising|change|changing|configure|configurable|"
    r"custom|default|longer|shorter|extend|extending|adjust|adjusting|respect|respects|ignores?|ignored|"
    r"option|parameter|documentation|docs|example|tutorial|proposal|rfc|enhancement|deprecat\w*|"
    r"retry|retrying|retries|attempt|sending|closing signal|until|unless|such as|usually|typically|should)\b|"
    r"\b(?:no|not|without|never|zero|0) (?:\w+ )?(?:timeouts?|time ?out|timing out|errors?|connection)\b|"
    # a counter, not a report: a key and its number (cgroup memory.events' "oom_kill 3", /proc/vmstat)
    r"\A\s*[\w.-]+\s*[=:]?\s*\d+\s*\Z"
)
_TITLE_WORDS = (
    ("words: start-up", _near(_TITLE_STARTUP, _TITLE_REACH)),
    ("words: collective timeout", _near(_TITLE_COLLECTIVE, _TIMEOUT_WORD)),
    ("words: network", _near(_TITLE_TRANSPORT, _TITLE_NET)),
    ("words: killed", _one(_KILLED)),
    # a handler's or a test's name is no crash ("faulthandler segfault handler registered")
    ("words: crash signal", _one(rf"{_CRASH}|\A(?!.*handler|.*\btests?\b)(?=.*(?:{_TITLE_CRASH}))")),
)
_HEAD_TITLE_SIGNATURES = tuple(row for row in SIGNATURES if row.name in _TITLE_ROWS)
_BY_NAME = {row.name: row for row in SIGNATURES}
_TITLE_SIGNATURES = tuple(row for row in SIGNATURES if row.name in _TITLE_ROWS) + tuple(
    replace(_BY_NAME[name], pattern=pattern, build=_build(_KINDS[name], title=True))
    for name, pattern in _TITLE_WORDS
)


def parse(hit: Hit) -> list[Event]:
    text = hit.text
    if _INFO.search(text) or _PROSE.search(text) or _TABLE_ROW.match(text) or _OTHER_SERVICE.search(text):
        return []
    rows = SIGNATURES if _FAILED.search(text) else _TITLE_SIGNATURES if _title(hit) else _head_rows(hit)
    if not any(row.pattern.search(text) for row in rows) or _owned(hit):
        return []
    return read(hit, rows)

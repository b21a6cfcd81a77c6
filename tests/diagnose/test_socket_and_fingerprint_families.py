"""socket.cpp's connect records and ProcessGroupWrapper's fingerprint diff, read at their source
(torch/csrc/distributed/c10d/socket.cpp 1.13-2.x, ProcessGroupWrapper.cpp 2.1+), behind every launcher's
prefix.

- socket.cpp logs each failed attempt at warning level with c10d's tag ("[W socket.cpp:601] [c10d] The
  client socket has failed to connect to [localhost]:29500 (errno: 99 - ...)") and goes on: a retry of a
  running start-up, silent. The same words without the tag are the exception it raised (its per-address
  errors joined after "failed to connect to any network address of (h, p)") or the message a user quoted as
  their error: the paste ending in them is the failure, whatever the errno.
- the exception's summary names the store's address, also when its per-address part is an errno that
  socket.cpp's warnings go past (99 on localhost, 111); 1.1x spelled it "any network address on (h, p)".
- ProcessGroupWrapper's diff ("Collectives differ in the following aspects:   Tensor Tensor shapes: 4vs 5")
  on a line of its own, the fingerprints before it cut off or wrapped away, is still the DETAIL mismatch.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, failure_findings, prefixed

# -- socket.cpp's per-address record quoted without c10d's tag -------------------------------------------

BARE = [
    # (record, host, port, errno)
    (
        "The client socket has failed to connect to [ip6-localhost]:24355 (errno: 99 - Cannot assign requested address)",
        "ip6-localhost",
        24355,
        99,
    ),
    (
        "The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).",
        "localhost",
        29500,
        99,
    ),
    (
        "The client socket has failed to connect to [node-0]:29500 (errno: 111 - Connection refused).",
        "node-0",
        29500,
        111,
    ),
    (
        "The client socket has failed to connect to [::ffff:10.0.0.3]:29500 (errno: 113 - No route to host).",
        "::ffff:10.0.0.3",
        29500,
        113,
    ),
    (
        "The client socket has failed to connect to [master]:23456 (errno: 110 - Connection timed out).",
        "master",
        23456,
        110,
    ),
    (
        "The client socket has failed to connect to [gpu-node-01]:29500 (errno: 99 - Cannot assign requested address).",
        "gpu-node-01",
        29500,
        99,
    ),
    (
        "The client socket has failed to connect to [DESKTOP-1]:29500 (system error: 10049 - The requested address is not valid in its context.).",
        "DESKTOP-1",
        29500,
        10049,
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("record,host,port,errno", BARE)
def test_a_connect_record_quoted_bare_at_the_pastes_end_is_the_failure(
    prefix: str, record: str, host: str, port: int, errno: int
) -> None:
    check_root(prefixed(prefix, record), "RUN222", {"master_addr": host, "master_port": port, "errno": errno})


@pytest.mark.parametrize("record,host,port,errno", BARE)
def test_the_same_record_with_c10ds_tag_is_a_retry(record: str, host: str, port: int, errno: int) -> None:
    # the warning of a start-up that went on: localhost's IPv6 address, a refused connect, retried
    if errno == 111 or host in ("localhost", "ip6-localhost"):
        log = f"[W socket.cpp:601] [c10d] {record}\n"
        assert failure_findings(log) == [], log


@pytest.mark.parametrize("record,host,port,errno", BARE)
def test_a_bare_record_the_run_went_past_is_silent(record: str, host: str, port: int, errno: int) -> None:
    if errno in (99, 111, 10049):
        log = record + "\nepoch 0 step 10 loss 2.31\nepoch 0 step 20 loss 2.02\n"
        assert failure_findings(log) == [], log


def test_a_bare_record_whose_store_connected_later_is_silent() -> None:
    log = (
        "The client socket has failed to connect to [node-1]:29500 (errno: 111 - Connection refused).\n"
        "[I socket.cpp:787] [c10d] The client socket has connected to [node-1]:29500 on [node-2]:51234.\n"
    )
    assert failure_findings(log) == []


# -- the exception's summary with its per-address errors -------------------------------------------------

SUMMARY = [
    # 2.x: the summary, then each address's error; localhost's IPv6 errno 99 is the only one
    (
        "RuntimeError: The client socket has failed to connect to any network address of (localhost, 29500). "
        "The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested "
        "address).",
        "localhost",
        29500,
    ),
    (
        "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of "
        "(node0, 29500). The client socket has failed to connect to [node0]:29500 (errno: 111 - Connection "
        "refused). The client socket has failed to connect to [::ffff:10.0.0.1]:29500 (errno: 111 - Connection "
        "refused).",
        "node0",
        29500,
    ),
    # 1.1x spelled it "on"
    (
        "RuntimeError: The client socket has failed to connect to any network address on (127.0.0.1, 29500).",
        "127.0.0.1",
        29500,
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log,host,port", SUMMARY)
def test_the_exceptions_summary_names_the_store(prefix: str, log: str, host: str, port: int) -> None:
    check_root(prefixed(prefix, log), "RUN222", {"master_addr": host, "master_port": port})


# A terminal wrapped it (the continuations carry no logger prefix: the terminal cut the text, not the logger);
# a markdown quote the paste added goes on every line.
WRAPPED = (
    "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address of\n"
    "(localhost, 29400). The client socket has failed to connect to [localhost]:29400 (errno: 99 - Cannot\n"
    "assign requested address).\n"
)


@pytest.mark.parametrize("prefix", ["", "> "])
def test_the_summary_wrapped_by_a_terminal(prefix: str) -> None:
    check_root(prefixed(prefix, WRAPPED), "RUN222", {"master_addr": "localhost", "master_port": 29400})


# -- socket.cpp's connect timeout without its address ---------------------------------------------------------

NO_ADDRESS = [
    # an issue title cut after "connect to"
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 1800000ms while trying to connect to",
        1800000,
    ),
    # a record cut mid-word
    (
        "[E108 20:04:34.467642512 socket.cpp:957] [c10d] The client socket has timed out after 900s whi",
        900000,
    ),
    # a placeholder for the address the user hid
    (
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (PRIVATE_IP, PORT)",
        600000,
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line,ms", NO_ADDRESS)
def test_a_connect_timeout_without_its_address(prefix: str, line: str, ms: int) -> None:
    root = failure_findings(prefixed(prefix, line))[0]
    assert root.code == "RUN222" and root.facts["timeout_ms"] == ms and "master_port" not in root.facts, root


def test_a_connect_timeout_with_its_address_keeps_it() -> None:
    line = "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect to (10.1.1.1, 29500)."
    check_root(line, "RUN222", {"master_addr": "10.1.1.1", "master_port": 29500, "timeout_ms": 1800000})


# -- ProcessGroupWrapper's diff on a line of its own --------------------------------------------------------

DIFF = [
    (
        "Collectives differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456",
        "Tensor Tensor shapes",
    ),
    (
        "memory_format=(nullopt))).Collectives differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456",
        "Tensor Tensor shapes",
    ),
    (
        "Collectives differ in the following aspects: \t Sequence number: 5vs 6  Op type: BROADCASTvs ALLREDUCE",
        "Op type",
    ),
    (
        "Collectives differ in the following aspects:   Tensor Tensor dtypes: Floatvs Half",
        "Tensor Tensor dtypes",
    ),
    # the diff's aspects wrapped onto the next line
    ("Collectives differ in the following aspects:\n\t Op type: ALLREDUCEvs REDUCE", "Op type"),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("log,aspect", DIFF)
def test_the_fingerprint_diff_alone_is_the_mismatch(prefix: str, log: str, aspect: str) -> None:
    found = failure_findings(prefixed(prefix, log))
    assert found and found[0].code == "RUN201", (log, found)
    assert aspect in found[0].facts["differ"], found[0].facts


def test_the_diff_after_its_fingerprints_is_one_finding() -> None:
    log = (
        "[rank1]: RuntimeError: Detected mismatch between collectives on ranks. Rank 1 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[195812480], TensorDtypes=BFloat16, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)), but Rank 0 is running collective: "
        "CollectiveFingerPrint(SequenceNumber=3104, OpType=ALLREDUCE, TensorShape=[51123456], TensorDtypes=BFloat16, "
        "TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda)).\n"
        "[rank1]: Collectives differ in the following aspects:   Tensor Tensor shapes: 195812480vs 51123456\n"
    )
    found = [f for f in failure_findings(log) if f.code == "RUN201"]
    assert len(found) == 1 and found[0].facts["seq"] == 3104, found


def test_the_diff_words_in_prose_about_fingerprints_stay_silent() -> None:
    log = "The error says which collectives differ in the following aspects when TORCH_DISTRIBUTED_DEBUG is set.\n"
    assert failure_findings(log) == []


# -- a host name in brackets that starts with "m" is no colour code that lost its ESC ------------------------


@pytest.mark.parametrize("host", ["master", "mynode-3", "m1.cluster.local"])
def test_a_bracketed_host_starting_with_m_keeps_its_name(host: str) -> None:
    log = f"The client socket has failed to connect to [{host}]:29500 (errno: 113 - No route to host).\n"
    check_root(log, "RUN222", {"master_addr": host})


def test_a_reset_code_that_lost_its_esc_is_still_removed() -> None:
    log = (
        "[31m[mThe client socket has failed to connect to [master]:29500 (errno: 113 - No route to host).[m\n"
    )
    check_root(log, "RUN222", {"master_addr": "master", "master_port": 29500})


# -- a store read for rank 0's NCCL id, its message cut off: the backtrace alone ----------------------------

_LIB = "(0x7f97f10fed50 in /usr/local/lib/python3.12/dist-packages/torch/lib/libtorch_cpu.so)"
UID_STACKS = [
    # 2.x (THUDM/slime#1309's shape): PrefixStore::get twice, then broadcastUniqueNCCLID
    "frame #7: c10d::PrefixStore::get(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) + 0x30 "
    + _LIB
    + "\n"
    "frame #8: c10d::PrefixStore::get(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) + 0x30 "
    + _LIB
    + "\n"
    "frame #9: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, int) + 0x5c4 "
    + _LIB
    + "\n"
    "frame #10: c10d::ProcessGroupNCCL::initNCCLComm(std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&, c10::Device&, c10d::OpType, int, bool) + 0x1c2a "
    + _LIB
    + "\n",
    # 1.x: TCPStore's wait and get
    "frame #2: c10d::TCPStore::doWait(c10::ArrayRef<std::string>, std::chrono::duration<long, std::ratio<1l, 1000l> >) + 0x32 "
    + _LIB
    + "\n"
    "frame #3: c10d::TCPStore::doGet(std::string const&) + 0x21 " + _LIB + "\n"
    "frame #4: c10d::TCPStore::get(std::string const&) + 0x55 " + _LIB + "\n"
    "frame #5: c10d::PrefixStore::get(std::string const&) + 0x32 " + _LIB + "\n"
    "frame #6: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, c10d::OpType, std::string const&, int) + 0x1dc "
    + _LIB
    + "\n",
    # 2.4+: the client's receive under the get
    "frame #1: c10d::detail::TCPClient::receiveValue() + 0x6a " + _LIB + "\n"
    "frame #2: c10d::TCPStore::doGet(std::string const&) + 0x3e " + _LIB + "\n"
    "frame #3: c10d::TCPStore::get(std::string const&) + 0x7e " + _LIB + "\n"
    "frame #4: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, std::string const&, int) + 0x1a2 "
    + _LIB
    + "\n",
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("stack", UID_STACKS)
def test_a_backtrace_of_the_store_read_for_the_nccl_id(prefix: str, stack: str) -> None:
    check_root(prefixed(prefix, stack), "RUN222", {"store_op": "broadcastUniqueNCCLID"})


def test_rank_0s_own_nccl_id_failure_is_not_the_stores() -> None:
    # ncclGetUniqueId failing inside broadcastUniqueNCCLID (NCCL's bootstrap): no store frame under it
    stack = (
        "frame #1: c10d::ProcessGroupNCCL::broadcastUniqueNCCLID(ncclUniqueId*, bool, std::string const&, int) + 0x1a2 "
        + _LIB
        + "\n"
        "frame #2: c10d::ProcessGroupNCCL::getNCCLComm(std::string const&, c10::Device&, c10d::OpType, int, bool) + 0x2c4 "
        + _LIB
        + "\n"
    )
    assert all(f.code != "RUN222" for f in failure_findings(stack))


def test_the_backtrace_under_its_message_is_one_finding() -> None:
    log = (
        "torch.distributed.DistBackendError: [4] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout\n"
        "Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:670 (most recent call first):\n"
        + UID_STACKS[1]
    )
    found = [f for f in failure_findings(log) if f.code == "RUN222"]
    assert len(found) == 1 and found[0].facts.get("store_key") == "0", found


# -- torchrun's agent traceback cut right after its start-up records (its INFO lines not shown) ---------------

_AGENT_STACK = (
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/bin/torchrun", line 33, in <module>\n'
    "    sys.exit(load_entry_point('torch==2.0.1', 'console_scripts', 'torchrun')())\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 346, in wrapper\n'
    "    return f(*args, **kwargs)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 794, in main\n'
    "    run(args)\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 785, in run\n'
    "    elastic_launch(\n"
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 134, in __call__\n'
    "    return launch_agent(self._config, self._entrypoint, list(args))\n"
)
AGENT_START = [
    "WARNING:torch.distributed.launcher.api:config has no run_id, generated a random run_id: 174580650467654300307713793029077439978\n",
    "WARNING:torch.distributed.run:\n*****************************************\nSetting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed.\n*****************************************\n",
    "W0813 22:22:54.570086 140209818330880 torch/distributed/run.py:779] *****************************************\n",
    "  metrics_cfg      : {}\n",
    "[INFO] 2021-12-08 12:28:26,099 c10d_rendezvous_backend: Process 8 hosts the TCP store for the C10d rendezvous backend.\n",
]


AGENT_START += [
    # the command the user ran, then the agent's traceback: no worker said anything in between
    "bash examples/lora_multi_gpu/multi_node.sh\n\n",
    "$ torchrun --nnodes=2 --nproc_per_node=8 --rdzv_backend=c10d --rdzv_endpoint=node0:29400 train.py\n",
    "```\nNNODES=2 NODE_RANK=1 bash run.sh\n",
]


@pytest.mark.parametrize("start", AGENT_START)
def test_an_agent_traceback_cut_after_its_start_up_records(start: str) -> None:
    check_root(start + _AGENT_STACK, "RUN221", {"agent_rendezvous": True})


def test_an_agent_traceback_after_a_workers_output_is_not_the_meeting() -> None:
    log = AGENT_START[0] + "Start running basic DDP example on rank 1.\n" + _AGENT_STACK
    assert all(f.code != "RUN221" for f in failure_findings(log))


# -- a stack cut inside the meeting, the user's question after the code block --------------------------------

_CUT_STACK = (
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/distributed_c10d.py", line 423, in init_process_group\n'
    "    store, rank, world_size = next(rendezvous_iterator)\n"
    '  File "/opt/conda/lib/python3.7/site-packages/torch/distributed/rendezvous.py", line 133, in _tcp_rendezvous_handler\n'
    "    store = TCPStore(result.hostname, result.port, world_size, start_daemon, timeout)\n"
)


@pytest.mark.parametrize(
    "tail",
    [
        "\nanyone faced same problem?\n",
        "```\n\nAny suggestions? thanks.\n",
        "\nI am using torch 1.7.0 on Ubuntu.\n",
    ],
)
def test_a_cut_stack_followed_by_the_users_question_still_ends_the_paste(tail: str) -> None:
    check_root(_CUT_STACK + tail, "RUN221", {"cut": True})


@pytest.mark.parametrize(
    "tail",
    [
        "\nThe training failed with a timeout error after that.\n",  # names an error: not only prose
        "epoch 0 step 10 loss 2.31\n",  # output of a run that went on, no blank line before it
    ],
)
def test_a_cut_stack_followed_by_more_than_prose_is_not_read_as_cut(tail: str) -> None:
    assert all(f.facts.get("cut") is not True for f in failure_findings(_CUT_STACK + tail))


def test_glooss_source_line_is_no_port() -> None:
    log = (
        "RuntimeError: [/opt/conda/conda-bld/pytorch_1634272178570/work/third_party/gloo/gloo/transport/tcp/pair.cc:176] "
        "bind: Address already in use\n"
    )
    root = failure_findings(log)[0]
    assert root.code == "RUN223" and "port" not in root.facts, root.facts


# -- rendezvous.py's configuration errors, the 1.0 nightlies' words too -----------------------------------------

CONFIG = [
    (
        "ValueError: Error initializing torch.distributed using env:// rendezvous: environment variable RANK expected, but not set",
        "env://",
        "RANK",
    ),
    ("RuntimeError: env:// rendezvous: WORLD_SIZE not set", "env://", "WORLD_SIZE"),
    ("ValueError: env:// rendezvous: MASTER_ADDR not set", "env://", "MASTER_ADDR"),
    ("ValueError: tcp:// rendezvous: port number missing", "tcp://", None),
    (
        "ValueError: Error initializing torch.distributed using tcp:// rendezvous: rank parameter missing",
        "tcp://",
        None,
    ),
]


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
@pytest.mark.parametrize("line,method,var", CONFIG)
def test_the_rendezvous_handlers_configuration_errors(
    prefix: str, line: str, method: str, var: object
) -> None:
    check_root(prefixed(prefix, line), "RUN224", {"init_method": method, "missing_variable": var})


def test_a_guide_that_names_the_env_method_is_silent() -> None:
    log = "Use the env:// rendezvous: set MASTER_ADDR and MASTER_PORT before you call init_process_group.\n"
    assert failure_findings(log) == []


# -- Lightning: two processes announce one global rank, others never announce theirs ---------------------------


def _members(fmt: str, ranks: list[int], world: int, prefix: str = "") -> str:
    return "".join(f"{prefix}{fmt.format(r=r, m=r + 1, w=world)}\n" for r in ranks)


PL_OLD = "initializing ddp: GLOBAL_RANK: {r}, MEMBER: {m}/{w}"
PL_NEW = "Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {m}/{w}"


@pytest.mark.parametrize("fmt", [PL_OLD, PL_NEW])
@pytest.mark.parametrize("prefix", ["", "INFO: ", "[rank: 0] "])
def test_lightning_ranks_taken_twice_and_others_missing(fmt: str, prefix: str) -> None:
    # Lightning-AI/pytorch-lightning#4389's shape: both nodes think they are node 0
    log = "GPU available: True, used: True\n" + _members(fmt, [1, 1, 2, 2, 3, 3, 0, 0], 8, prefix)
    check_root(
        log, "RUN224", {"duplicate_ranks": [0, 1, 2, 3], "missing_ranks": [4, 5, 6, 7], "world_size": 8}
    )


def test_lightning_every_rank_once_is_silent() -> None:
    assert failure_findings(_members(PL_NEW, [0, 1, 2, 3, 4, 5, 6, 7], 8)) == []


def test_lightning_lines_logged_by_two_handlers_are_no_duplicates() -> None:
    # each process prints its line through Python logging's "INFO: " and through absl's glog-style handler
    lines = "".join(
        f"INFO: Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/32\n"
        f"I0411 01:28:10.345892 140656298329920 distributed.py:244] Initializing distributed: GLOBAL_RANK: {r}, "
        f"MEMBER: {r + 1}/32\n"
        for r in (6, 1, 4, 3)
    )
    assert failure_findings(lines) == []


def test_lightning_duplicates_of_a_run_that_went_on_are_silent() -> None:
    log = (
        _members(PL_NEW, [0, 0, 1, 1], 4)
        + "Epoch 0:  10%|█         | 10/100 [00:05<00:45,  2.00it/s, loss=2.1]\n"
    )
    assert failure_findings(log) == []

"""MPI job ends and peer-link errors read at their source (doctor/diagnose/rules/mpi_exits.py):

- Open MPI's abort help text (ompi/runtime help-mpi-api.txt "mpi-abort", 1.x-4.x: "MPI_ABORT was invoked
  on rank N in communicator C" / "with errorcode E."; 5.x/PRRTE: "  Proc: ..." / "  Errorcode: E");
- MPICH's MPID_Abort ("application called MPI_Abort(MPI_COMM_WORLD, 1) - process 0", MPICH 4 / Intel MPI
  behind "Abort(1) on node 0 (rank 0 in comm 0): ", MPICH2 PMI behind "[cli_0]: aborting job:");
- Hydra's summary box (pm/pmiserv, ui/mpich/mpiexec.c): 3.x "PID .. RUNNING AT host" / "EXIT CODE: 9" with
  or without "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)", 3.3+/4.x/Intel MPI
  "RANK r PID .. RUNNING AT host" / "KILLED BY SIGNAL: 9 (Killed)"; MPICH2 mpd's "caused collective abort";
- MPICH's error stack (src/mpi/errhan/errnames.txt): **comm_fail "Communication error with rank N",
  **sock|connfailed "connection failure (set=0,sock=1,errno=104:Connection reset by peer)", ch4 **ofi_poll
  "OFI poll failed (ofi_events.c:...:Input/output error)" and its FI_ETRUNC "Message too long".
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding

OMPI_ABORT = [
    # Open MPI 1.x-4.x, as printed
    "--------------------------------------------------------------------------\n"
    "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD\n"
    "with errorcode 1.\n\n"
    "NOTE: invoking MPI_ABORT causes Open MPI to kill all MPI processes.\n"
    "You may or may not see output from other processes, depending on\n"
    "exactly when Open MPI kills them.\n"
    "--------------------------------------------------------------------------\n",
    # unwrapped by a paste
    "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD with errorcode 1.\n",
    # Open MPI 5 (PRRTE)
    "MPI_ABORT was invoked on rank 2 in communicator MPI_COMM_WORLD\n  Proc: [[60364,1],2]\n  Errorcode: 1\n",
]


@pytest.mark.parametrize("log", OMPI_ABORT)
def test_open_mpi_abort_is_the_rank_exit(log: str) -> None:
    check_root(log, "RUN133", {"rank": 2, "exitcode": 1})


MPICH_ABORT = [
    ("application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3\n", 3),
    (
        "Abort(1) on node 3 (rank 3 in comm 0): "
        "application called MPI_Abort(MPI_COMM_WORLD, 1) - process 3\n",
        3,
    ),
    ("[cli_3]: aborting job:\napplication called MPI_Abort(MPI_COMM_WORLD, 1) - process 3\n", 3),
]


@pytest.mark.parametrize(("log", "rank"), MPICH_ABORT)
def test_mpich_abort_is_the_rank_exit(log: str, rank: int) -> None:
    check_root(log, "RUN133", {"rank": rank, "exitcode": 1})


BOX = "===================================================================================\n"


def _hydra(*lines: str) -> str:
    return BOX + "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES\n" + "".join(lines) + BOX


HYDRA = [
    # 3.x: the signal's number as the exit code, with the exit string after the box (jukebox #155's shape)
    (
        _hydra(
            "=   PID 9665 RUNNING AT gpu1\n", "=   EXIT CODE: 9\n", "=   CLEANING UP REMAINING PROCESSES\n"
        )
        + "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Killed (signal 9)\n",
        "RUN121",
        {"exitcode": -9, "host": "gpu1", "pid": 9665},
    ),
    # 3.x without the exit string
    (_hydra("=   PID 92248 RUNNING AT desk\n", "=   EXIT CODE: 9\n"), "RUN121", {"exitcode": -9}),
    # 3.3+/4.x/Intel MPI: the rank and the signal
    (
        _hydra("=   RANK 1 PID 65033 RUNNING AT node2\n", "=   KILLED BY SIGNAL: 9 (Killed)\n"),
        "RUN121",
        {"signal": "SIGKILL"},
    ),
    # a shell's 128 + 6 with the exit string naming the signal
    (
        _hydra("=   PID 66543 RUNNING AT 2a1b7906b5b2\n", "=   EXIT CODE: 134\n")
        + "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Aborted (signal 6)\n",
        "RUN131",
        {"exitcode": -6},
    ),
    (
        _hydra("=   RANK 0 PID 5490 RUNNING AT gn59\n", "=   KILLED BY SIGNAL: 11 (Segmentation fault)\n"),
        "RUN131",
        {},
    ),
    # a plain non-zero exit
    (_hydra("=   RANK 2 PID 77 RUNNING AT n3\n", "=   EXIT CODE: 1\n"), "RUN133", {"rank": 2, "exitcode": 1}),
    # MPICH2 mpd
    (
        "rank 0 in job 1  node1_65327   caused collective abort of all ranks\n"
        "  exit status of rank 0: killed by signal 9\n",
        "RUN121",
        {"rank": 0},
    ),
]


@pytest.mark.parametrize(("log", "code", "facts"), HYDRA)
def test_hydra_box_is_the_rank_exit(log: str, code: str, facts: dict) -> None:
    check_root(log, code, facts)


def test_a_python_error_before_the_abort_is_the_cause() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 10, in <module>\n'
        "    main()\n"
        "ValueError: bad config key 'lr_sched'\n" + OMPI_ABORT[0]
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN132", root


ERR_STACK = (
    "Abort(68275727) on node 1 (rank 1 in comm 0): Fatal error in PMPI_Allreduce: "
    "Other MPI error, error stack:\n"
)
PEER = [
    # ch3 (MPICH 3.x, Intel MPI 2018)
    (
        "Fatal error in PMPI_Reduce: Unknown error class, error stack:\n"
        "PMPI_Reduce(1258)...............: MPI_Reduce(sbuf=0x7ffc, rbuf=0x7ffd, count=1, MPI_INT, MPI_SUM, "
        "root=0, MPI_COMM_WORLD) failed\n"
        "MPIR_Reduce_intra_binomial(125).:\n"
        "MPIDI_CH3U_Recvq_FDU_or_AEP(629): Communication error with rank 3\n",
        {"op": "Reduce", "peer": 3},
    ),
    (
        ERR_STACK + "MPIDU_Socki_handle_read(...): connection failure "
        "(set=0,sock=1,errno=104:Connection reset by peer)\n",
        {"op": "Allreduce", "rank": 1, "errno": 104},
    ),
    # ch4/OFI (MPICH 4, Intel MPI 2019+, Cray MPICH)
    (
        ERR_STACK + "MPIDI_OFI_handle_cq_error(1042)..: OFI poll failed "
        "(ofi_events.c:1044:MPIDI_OFI_handle_cq_error:Input/output error)\n",
        {"op": "Allreduce", "rank": 1},
    ),
    (
        "MPICH ERROR [Rank 519] [job id 947981.0] [Tue Jun 11 15:11:42 2024] [c1207] - Abort(539602063) "
        "(rank 519 in comm 0): Fatal error in PMPI_Iprobe: Other MPI error, error stack:\n"
        "MPIDI_OFI_handle_cq_error(1075): OFI poll failed (ofi_events.c:1077:MPIDI_OFI_handle_cq_error:"
        "Input/output error - PTLTE_NOT_FOUND)\n",
        {"op": "Iprobe", "rank": 519},
    ),
]


@pytest.mark.parametrize(("log", "facts"), PEER)
def test_mpich_peer_link_is_the_network(log: str, facts: dict) -> None:
    check_root(log, "RUN174", facts)


def test_the_peer_rank_is_not_taken_for_the_reporter() -> None:
    root = root_finding(PEER[0][0])
    assert root is not None and root.facts.get("rank") is None, root


def test_ofi_message_too_long_is_a_size_mismatch() -> None:
    log = ERR_STACK + (
        "MPIDI_OFI_handle_cq_error(1059): OFI poll failed "
        "(ofi_events.c:1061:MPIDI_OFI_handle_cq_error:Message too long - OK)\n"
    )
    check_root(log, "RUN201", {"rank": 1})


def test_a_peer_that_died_first_is_the_cause() -> None:
    log = "srun: error: x1000c5s7b0n1: task 1: Segmentation fault\n" + PEER[2][0].replace(
        "(rank 1 in comm 0)", "(rank 0 in comm 0)"
    )
    check_root(log, "RUN131", {"rank": 1})


DECOYS = [
    "if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);\n",
    "INFO: on error the launcher calls MPI_Abort and mpirun reports the exit code\n",
    "mpirun -np 4 python train.py\nrank 0: epoch 1 loss 0.31\nrank 0: done\n",
]


@pytest.mark.parametrize("log", DECOYS)
def test_decoys_stay_silent(log: str) -> None:
    assert root_finding(log) is None


def test_mpirun_signal_record_wrapped_inside_its_signal_word() -> None:
    # a terminal's 80-column wrap cuts "exited on sign|al 4": the record's head is what the scanner finds
    log = (
        "--------------------------------------------------------------------------\n"
        "mpirun noticed that process rank 1 with PID 0 on node tw-mbp-gbai exited on sign\n"
        "al 4 (Illegal instruction: 4).\n"
        "--------------------------------------------------------------------------\n"
    )
    root = root_finding(log)
    assert root is not None and root.code == "RUN131" and root.facts.get("signal") == "SIGILL", root

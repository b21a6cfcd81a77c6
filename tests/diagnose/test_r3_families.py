"""NCCL's result texts without NCCL named, the ranks' meeting named in a person's words, and a device's OOM
in a first-person title: families read at their source (NCCL src/init.cc ncclGetErrorString across 2.x;
torch.distributed's init_process_group; the CUDA caching allocator's OOM as people report it).

Each positive is the family's wording as a program or a person writes it; each near-miss shares its words
and names no failure of the job (another program's handler, a question, a setting, a denial).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import root_finding

# -- ncclGetErrorString's texts (NCCL src/init.cc) ------------------------------------------------------
# 2.12+: "unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "unhandled system error (run with
# NCCL_DEBUG=INFO for details)", "invalid argument (run with NCCL_DEBUG=WARN for details)", "invalid usage
# (run with NCCL_DEBUG=WARN for details)"; 2.0-2.11 the same texts without the hint. Synthetic lines built
# from those strings as wrappers and pastes leave them (no "NCCL error in:" head).
HINTED = [
    ("invalid usage (run with NCCL_DEBUG=WARN for details)", "RUN191"),
    ("RuntimeError: invalid usage (run with NCCL_DEBUG=WARN for details)", "RUN191"),
    ("ValueError: invalid argument (run with NCCL_DEBUG=WARN for details)", "RUN191"),
    ("Invalid usage (run with NCCL_DEBUG=WARN for details)", "RUN191"),
    ("unhandled system error (run with NCCL_DEBUG=INFO for details)", "RUN171"),
    ("unhandled cuda error (run with NCCL_DEBUG=INFO for details)", "RUN194"),
]


@pytest.mark.parametrize(("line", "code"), HINTED)
def test_nccl_result_text_with_nccls_own_hint_is_nccls(line: str, code: str) -> None:
    root = root_finding(line + "\n")
    assert root is not None and root.code == code, (line, root)


# ncclSystemError's text in a thread's title, NCCL unnamed: the job named beside it.
UNNAMED_SYSTEM = [
    "unhandled system error when using multi node",
    'Get "unhandled system error" when training with 2 nodes',
    "DistBackendError: unhandled system error",
    "[Bug] unhandled system error with 2 GPUs",
    "多机训练报错 unhandled system error",
    "Job failed with unhandled system error on rank 3",
]


@pytest.mark.parametrize("title", UNNAMED_SYSTEM)
def test_nccl_system_error_text_unnamed_in_a_job_title_is_nccls(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.code == "RUN171", (title, root)
    assert root.facts.get("read_as") == "title" or "unhandled system error" in root.message, root


UNNAMED_SILENT = [
    # web services' handlers say the same words of a request (other programs' logs)
    "Unhandled system error occurred: connection lost",
    "Unhandled system error in get_user: KeyError",
    "ERROR Unhandled system error on path /api/train: 500",
    # nothing of a distributed job beside the words
    "unhandled system error",
    "RuntimeError: unhandled system error",
    # a how-to question
    "How to fix unhandled system error in multi node training",
    # a hint alone, with no result text before it
    "Set NCCL_DEBUG=INFO (run with NCCL_DEBUG=INFO for details)",
]


@pytest.mark.parametrize("line", UNNAMED_SILENT)
def test_nccl_text_look_alikes_stay_silent(line: str) -> None:
    root = root_finding(line + "\n")
    assert root is None or root.category != "nccl_network", (line, root)
    assert root is None or root.code not in ("RUN171", "RUN191"), (line, root)


# -- the ranks' meeting in a person's words (torch.distributed.init_process_group) -----------------------
# init_process_group makes the default process group; a title that names that making with a hang word in it
# names the meeting, as the call's own name does ("stuck in dist_util.setup_dist()").
MEETING_PROSE = [
    "Training hangs when initializing process group",
    "hangs while initializing the process group on 2 nodes",
    "stuck at process group initialization",
    "Hang during the initialization of the distributed process group",
    "Program freezes at distributed init with 4 GPUs",
    "process group init hangs forever",
]


@pytest.mark.parametrize("title", MEETING_PROSE)
def test_the_meeting_named_in_words_with_its_hang_is_the_rendezvous(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.code == "RUN221", (title, root)
    assert root.facts.get("read_as") == "title", root.facts


MEETING_PROSE_SILENT = [
    # the hang after the meeting (a collective's, hang_titles.py) or at another object's initialization
    "Training hangs after initializing process group",
    "process group initialization completes and then hangs",
    "DDP hangs during initialization",
    "multi node training stuck at initialization",
    # a question, and a program's own line
    "How to avoid hang when initializing process group",
    "Initializing process group with: {'MASTER_ADDR': 'x'} hangs",
]


@pytest.mark.parametrize("title", MEETING_PROSE_SILENT)
def test_meeting_words_without_a_hang_in_the_meeting_are_not_the_rendezvous(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is None or root.category != "rendezvous", (title, root)


# -- a device's OOM in a first-person title (rules/person_oom_titles.py) -----------------------------------
# v20F-cuda_oom-006 (huggingface/transformers#23386) says "I get cuda oom when saving the final checkpoint" in
# its prose; titles say it so too. The device-OOM words are the net's (vocabulary._DEVICE_OOM).
PERSON_OOM = [
    "I get cuda oom when saving the final checkpoint",
    "I got CUDA OOM during evaluation",
    "We hit GPU OOM at step 100",
    "My job runs out of GPU memory with FSDP",
    "i keep getting cuda out of memory with 8 gpus",
    "I'm getting OOM on GPU 0 only with DDP",
]


@pytest.mark.parametrize("title", PERSON_OOM)
def test_a_first_person_title_naming_the_devices_oom_is_cuda_oom(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is not None and root.code == "RUN101", (title, root)
    assert root.facts.get("read_as") == "title", root.facts


def test_a_first_person_title_above_its_log_is_read_as_its_head() -> None:
    log = "I got CUDA OOM during evaluation\nEpoch 3: 100%|##########| 500/500\nvalidating...\n"
    root = root_finding(log)
    assert root is not None and root.code == "RUN101", root


PERSON_OOM_SILENT = [
    "I don't get OOM with one GPU",
    "We fixed the CUDA OOM by lowering the batch size",
    "I get OOM on CPU RAM when loading the dataset",  # the host's memory, no device named
    "How can I avoid CUDA OOM in DDP",
    "I set max_split_size_mb to avoid OOM",
    "I get OOM when saving",  # no device named: the net's phase words do not cover a person's narration
    "We reduced GPU OOM errors by half with activation checkpointing",
]


@pytest.mark.parametrize("title", PERSON_OOM_SILENT)
def test_a_first_person_oom_denied_avoided_or_not_the_devices_stays_silent(title: str) -> None:
    root = root_finding(title + "\n")
    assert root is None or root.category != "cuda_oom", (title, root)


def test_narration_in_a_log_is_not_a_title() -> None:
    # a first-person line in the middle of a log is the writer's narration, not the report's title
    log = "step 1 loss 2.3\nI think we might get OOM on GPU later\nstep 2 loss 2.1\n"
    root = root_finding(log)
    assert root is None or root.category != "cuda_oom", root


# -- a stack cut inside NCCL's communicator creation (rules/nccl_init_cut.py) -----------------------------
CHAINERMN = (  # chainer/chainermn#218 (v19E-nccl_system_error-003): the paste ends at CuPy's creation frame
    "Traceback (most recent call last):\n"
    '  File "./check.py", line 8, in main\n'
    "    comm._init_comms()\n"
    '  File "/home/u/site-packages/chainermn/communicators/_communication_utility.py", line 70, '
    "in init_comms\n"
    "    mpi_comm.size, nccl_comm_id, mpi_comm.rank)\n"
    '  File "cupy/cuda/nccl.pyx", line 127, in cupy.cuda.nccl.NcclCommunicator.__init__\n'
)
ALPA = (  # alpa-projects/alpa#937 (v22F-nccl_system_error-005): Ray's wrapped NcclError, its reason cut
    "jax._src.traceback_util.UnfilteredStackTrace: ray.exceptions.RayTaskError(NcclError): "
    "ray::MeshHostWorker.init_p2p_communicator() (pid=16322, ip=155.69.142.146)\n"
    '  File "/x/alpa/collective/collective_group/nccl_util.py", line 115, in create_nccl_communicator\n'
    "    comm = NcclCommunicator(world_size, nccl_unique_id, rank)\n"
)
PADDLE_OP = (  # PaddlePaddle/Paddle#27490 (v20D-nccl_system_error-005): the C++ stack before its summary
    "paddle.fluid.core_avx.EnforceNotMet:\n\n"
    "--------------------------------------------\n"
    "C++ Call Stacks (More useful to developers):\n"
    "--------------------------------------------\n"
    "0   std::string paddle::platform::GetTraceBackString<char const*>(char const*&&, char const*, int)\n"
    "1   paddle::platform::EnforceNotMet::EnforceNotMet(std::__exception_ptr::exception_ptr, "
    "char const*, int)\n"
    "2   paddle::platform::NCCLCommContext::CreateNCCLComm(ncclUniqueId*, int, int, int, int)\n"
    "3   paddle::operators::CCommInitOp::RunImpl(paddle::framework::Scope const&, paddle::platform::Place "
    "const&) const\n"
)
PADDLE_DYGRAPH = (  # PaddlePaddle/Paddle#27081 (v8g-nccl_system_error-010): prepare_context's init, cut
    '  File "/opt/python3.7/site-packages/paddle/fluid/dygraph/parallel.py", line 50, in prepare_context\n'
    "    parallel_helper._init_parallel_ctx()\n"
    '  File "/opt/python3.7/site-packages/paddle/fluid/dygraph/parallel_helper.py", line 37, in '
    "_init_parallel_ctx\n"
    "    __parallel_ctx__clz__.init()\n"
    "paddle.fluid.core_avx.EnforceNotMet: \n\n"
    "C++ Call Stacks (More useful to developers):\n"
    "0   std::string paddle::platform::GetTraceBackString<char const*>(char const*&&, char const*, int)\n"
)
# synthetic: CuPy 8+'s module path, as Ray's collective group prints it
CUPY8 = (
    '  File "/x/ray/util/collective/collective_group/nccl_util.py", line 110, in create_nccl_communicator\n'
    "    comm = NcclCommunicator(world_size, nccl_unique_id, rank)\n"
    '  File "cupy_backends/cuda/libs/nccl.pyx", line 282, in cupy_backends.cuda.libs.nccl.NcclCommunicator.'
    "__init__\n"
)


@pytest.mark.parametrize("log", [CHAINERMN, ALPA, PADDLE_OP, PADDLE_DYGRAPH, CUPY8])
def test_a_stack_cut_in_nccl_communicator_creation_is_nccls_bootstrap(log: str) -> None:
    root = root_finding(log)
    assert root is not None and root.code == "RUN171", root
    assert root.facts.get("cut") is True and root.facts.get("phase") == "nccl_communicator_creation", root


@pytest.mark.parametrize(
    ("log", "not_code"),
    [
        # the reason is in the paste: its own reading decides (CuPy's NcclError text, Paddle's summary)
        (
            CUPY8 + "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_INVALID_USAGE: invalid usage\n",
            "RUN171",
        ),
        (
            PADDLE_DYGRAPH + "Error Message Summary:\n----------------------\n"
            "ExternalError: Nccl error, unhandled cuda error (at /paddle/nccl_helper.h:104)\n",
            "RUN171",
        ),
    ],
)
def test_the_creation_frame_with_its_reason_is_read_by_the_reason(log: str, not_code: str) -> None:
    root = root_finding(log)
    assert root is None or root.code != not_code or root.facts.get("cut") is not True, root
    assert root is None or root.facts.get("phase") != "nccl_communicator_creation", root

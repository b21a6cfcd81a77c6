"""Peer-wait and inter-rank transport families (rules/peer_waits.py), read at their sources:

- TensorFlow core/distributed_runtime/master.cc (DeviceFinder::Wait, 1.4 line 221, 1.12 line 267, 2.x):
  "CreateSession still waiting for response from worker: /job:ps/replica:0/task:0": RUN221 when the log
  ends in it, silent when "Start master session" follows;
- PaddlePaddle wait_server_ready (distributed/fleet/base/private_helper_function.py 1.x-2.6):
  "server not ready, wait 3 sec to retry..." / "not ready endpoints:[...]": RUN221 when the log ends in it;
- DMLC ps-lite src/manager.cc Manager::Run: "Timeout (500 sec) to wait all other nodes initialized": RUN221;
- LightGBM src/network/socket_wrapper.hpp: "Socket recv error, code: 54" / "Socket send error (code: 104)":
  RUN174;
- Open MPI ompi/mca/pml/ucx/pml_ucx.c: "ucp_ep_create(proc=1) failed: Endpoint timeout", "Failed to resolve
  UCX endpoint for rank 1": RUN174;
- NCCL 2.23+ misc/socket.cc socketPollConnect quoted without ", retrying": RUN174;
- torch NCCLUtils.hpp C10D_NCCL_CHECK flattened onto one line (ncclSystemError / ncclRemoteError
  descriptions of NCCL src/misc/utils.cc ncclGetErrorString): RUN171 / RUN172;
- OpenSSH sshconnect2.c "user@host: Permission denied (publickey,password)." from an MPI launcher: RUN303;
- ProcessGroupNCCL.cpp watchdog record wrapped before "ran for N milliseconds before timing out": RUN151.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

PREFIXES = ["", "[1,0]<stderr>:", "node7: ", "(RayTrainWorker pid=1234) "]

TF_WAIT = "".join(
    f"2017-11-11 16:06:{s}.524442: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still "
    "waiting for response from worker: /job:ps/replica:0/task:0\n"
    for s in ("12", "22", "32")
)
PADDLE_WAIT = (
    "server not ready, wait 3 sec to retry...\nnot ready endpoints:['10.10.11.51:6070', '10.10.11.51:6071']\n"
) * 4

CASES = [
    (TF_WAIT, "RUN221", {"waiting_for": "/job:ps/replica:0/task:0", "framework": "tensorflow"}),
    (
        "2018-11-05 00:30:13.797170: I tensorflow/core/distributed_runtime/master.cc:267] CreateSession "
        "still waiting for response from worker: /job:worker/replica:0/task:1\n",
        "RUN221",
        {"waiting_for": "/job:worker/replica:0/task:1"},
    ),
    (PADDLE_WAIT, "RUN221", {"framework": "paddle", "endpoints": "10.10.11.51:6070, 10.10.11.51:6071"}),
    (
        "I1127 21:31:55.544849 3935673 tcp_utils.cc:181] The server starts to listen on IP_ANY:63314\n"
        "I1127 21:34:05.015228 3935673 tcp_utils.cc:107] Retry to connect to 0.1.68.146:63314 while the "
        "server is not yet listening.\n"
        "I1127 21:36:18.135196 3935673 tcp_utils.cc:107] Retry to connect to 0.1.68.146:63314 while the "
        "server is not yet listening.\n",
        "RUN221",
        {"framework": "paddle", "host": "0.1.68.146", "port": 63314},
    ),
    (
        "[LightGBM] [Fatal] Socket recv error, Connection reset by peer (code: 104)\n",
        "RUN174",
        {"errno": 104, "errno_name": "ECONNRESET", "socket_op": "recv"},
    ),
    (
        "[LightGBM] [Fatal] Socket send error (code: 10054)\n",
        "RUN174",
        {"errno": 10054, "socket_op": "send"},
    ),
    (
        "[hpc-polar-01-vm001:13210:0:13210]    ud_iface.c:732  UCX Fatal: transport error: "
        "Endpoint timeout\n",
        "RUN174",
        {"transport": "ucx"},
    ),
    (
        "[1506867524.064665] [clx-hercules-012:26727:0]     ucp_worker.c:373  UCX  ERROR Error Endpoint "
        "timeout was not handled for ep 0xac1510\n",
        "RUN174",
        {"error": "Endpoint timeout"},
    ),
    (
        "Unable to write to EQ: Missing or unavailable event queue. err: Cannot allocate memory (-12) "
        "prov_errno: Cannot allocate memory (-12) ./prov/efa/src/rxr/rxr.h:683\n",
        "RUN173",
        {"provider": "efa", "errno": -12},
    ),
    (
        # libfabric 1.9 prov/efa/src/rxr/rxr.h:1343 (the err/prov_errno pair of a failed completion)
        "Unable to write to EQ: Missing or unavailable event queue. err: Input/output error (5) "
        "prov_errno: Unknown error -11 (-11) prov/efa/src/rxr/rxr.h:1343\n",
        "RUN173",
        {"errno": 5, "prov_errno": -11},
    ),
    (
        "F0915 12:14:57.163543  2300 manager.cc:55] Timeout (500 sec) to wait all other nodes initialized. "
        "See commmets for more information\n*** Check failure stack trace: ***\n",
        "RUN221",
        {"framework": "ps-lite", "timeout_s": 500},
    ),
    ("[LightGBM] [Fatal] Socket recv error, code: 54\n", "RUN174", {"errno": 54, "errno_name": "ECONNRESET"}),
    (
        "lightgbm.basic.LightGBMError: Socket send error (code: 104)\n",
        "RUN174",
        {"errno": 104, "socket_op": "send"},
    ),
    (
        "[hpci5201:103648] pml_ucx.c:419  Error: ucp_ep_create(proc=1) failed: Endpoint timeout\n"
        "[hpci5201:103648] pml_ucx.c:472  Error: Failed to resolve UCX endpoint for rank 1\n",
        "RUN174",
        {"peer_rank": 1, "error": "Endpoint timeout"},
    ),
    (
        "socketPollConnect: connect to 169.254.20.10<52597> returned Connection refused\n",
        "RUN174",
        {"socket_error": "Connection refused"},
    ),
    (
        "NCCL error: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, NCCL version 2.22.3 "
        "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
        "error. Last error:\n",
        "RUN171",
        {"nccl_error": "ncclSystemError", "nccl_version": "2.22.3"},
    ),
    (
        "NCCL error: ProcessGroupNCCL.cpp:1970, NCCL version 2.19.3 ncclRemoteError: A call failed "
        "possibly due to a network error or a remote process exiting prematurely.\n",
        "RUN172",
        {"nccl_error": "ncclRemoteError"},
    ),
    (
        "Failed to add the host to the list of known hosts (/root/.ssh/known_hosts).\n"
        "Permission denied, please try again.\n"
        "root@tensorflow-mnist-worker-1.tensorflow-mnist-worker: Permission denied (publickey,password).\n",
        "RUN303",
        {"host": "tensorflow-mnist-worker-1.tensorflow-mnist-worker"},
    ),
    (
        "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000)\n"
        "  ran for 721595 milliseconds before timing out\n",
        "RUN151",
        {"seq": 1, "op": "ALLREDUCE", "timeout_ms": 600000, "ran_ms": 721595},
    ),
]


@pytest.mark.parametrize("prefix", PREFIXES)
@pytest.mark.parametrize("log,code,facts", CASES)
def test_peer_wait_family(prefix: str, log: str, code: str, facts: dict[str, object]) -> None:
    _check("".join(prefix + ln + "\n" for ln in log.splitlines()), code, facts)


HEALTHY = [
    # TF: the master waits for a task that then starts; training runs.
    "2017-11-07 13:04:58.438432: I tensorflow/core/distributed_runtime/master.cc:221] CreateSession still "
    "waiting for response from worker: /job:worker/replica:0/task:2\n"
    "2017-11-07 13:05:03.454152: I tensorflow/core/distributed_runtime/master_session.cc:1004] Start master "
    "session 2feaff26548834a9 with config:\n2017-11-07 13:05:08.958645: step 0, duration = 0.292\n",
    # Paddle: a trainer is late by a few seconds, then the run goes on.
    "server not ready, wait 3 sec to retry...\nnot ready endpoints:['127.0.0.1:11396']\n"
    "W0326 17:11:14.573264 179012 device_context.cc:237] Please NOTE: device: 1, CUDA Capability: 70\n"
    "epoch 0 step 10 loss 0.52\n",
    # Paddle's store: the master came up a moment later.
    "I1127 21:34:05.015228 3935673 tcp_utils.cc:107] Retry to connect to 10.0.0.1:63314 while the server is "
    "not yet listening.\nI1127 21:34:09.015228 3935673 nccl_context.cc:83] init nccl context nranks: 4\n"
    "epoch 0 step 10 loss 0.52\n",
    # NCCL's connect refused then the communicator came up.
    "node1:123:456 [0] NCCL INFO socketPollConnect: connect to 10.0.0.2<43251> returned Connection refused\n"
    "node1:123:456 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE\n",
    # A git remote over ssh is not a launch.
    "git@github.com: Permission denied (publickey).\nfatal: Could not read from remote repository.\n",
]


@pytest.mark.parametrize("log", HEALTHY)
def test_peer_wait_healthy_lines_stay_quiet(log: str) -> None:
    root = _root(log)
    assert root is None or root.code not in ("RUN221", "RUN174", "RUN303"), root

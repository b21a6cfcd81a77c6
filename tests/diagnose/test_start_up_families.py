"""Three start-up families read at their sources (r1, issue 26):

- Open MPI opal/runtime/help-opal-runtime.txt (1.x-5.x) "It looks like opal_init failed for some reason; your
  parallel process is likely to abort." with the OPAL step under it (opal_shmem_base_select failed,
  --> Returned value -1 instead of OPAL_SUCCESS): the node's MPI install or environment (RUN502,
  rules/mpi_bootstrap.py); orte_init / MPI_INIT keep their launch reading (RUN304);
- DGL-KE's kvstore server (dglke/kvserver.py start_server, 0.1.x) "Error: port 30050 is not available." after
  its check_port_available: RUN223 (rules/port_clash.py);
- torch socket.cpp's "The server socket has failed to bind to [::]:29500 (errno: 98 - ...)." quoted without
  its errno (a title, a cut paste): RUN223 (rules/c10d_socket.py).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root as _check
from tests.helpers.diagnose_root import root_finding as _root

OPAL = """--------------------------------------------------------------------------
It looks like {what} failed for some reason; your parallel process is
likely to abort.  There are many reasons that a parallel process can
fail during {what}; some of which are due to configuration or
environment problems.  This failure appears to be an internal failure;
here's some additional information (which may only be relevant to an
Open MPI developer):

  {step} failed
  --> Returned value -1 instead of OPAL_SUCCESS
--------------------------------------------------------------------------
"""


@pytest.mark.parametrize("step", ["opal_shmem_base_select", "opal_os_dirpath_create", "mca_base_open"])
def test_opal_init_is_the_nodes_install(step: str) -> None:
    _check(OPAL.format(what="opal_init", step=step), "RUN502", {"step": step, "init": "opal_init"})


def test_orte_init_keeps_its_launch_reading() -> None:
    root = _root(OPAL.format(what="orte_init", step="orte_ess_init"))
    assert root is not None and root.code != "RUN502"


@pytest.mark.parametrize("prefix", ["", "[1,0]<stderr>:", "node7: "])
def test_dglke_server_port_taken(prefix: str) -> None:
    log = "Logs are being recorded at: ckpts/TransE_l1_FB15k_11/train.log\n"
    log += (prefix + "Error: port 30051 is not available.\n") * 3
    _check(log, "RUN223", {"port": 30051})


@pytest.mark.parametrize(
    "line,port",
    [
        ("The server socket has failed to bind to [::]:29500, deepspeed 端口被占用", 29500),
        ("RuntimeError: The server socket has failed to bind to 0.0.0.0:29600", 29600),
        ("[Bug]: The server socket has failed to bind to [::]:12355 on every node", 12355),
    ],
)
def test_bind_quoted_without_errno(line: str, port: int) -> None:
    _check(line + "\n", "RUN223", {"master_port": port})


def test_bind_record_with_errno_stays_rendezvous_py_s() -> None:
    line = (
        "[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address "
    )
    line += "already in use).\n"
    root = _root(line)
    assert root is not None and root.code == "RUN223"

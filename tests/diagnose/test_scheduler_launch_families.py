"""Job schedulers' and MPI launchers' refusals to start the ranks, read at their sources
(doctor/diagnose/rules/scheduler_launch.py and the rows it sits beside):

- Slurm (SchedMD/slurm master 284c3b95f0): src/common/slurm_opt.c _validate_memory_options /
  _validate_tres_per_task (the inherited SLURM_* conflicts, RUN395; the options alone, RUN304),
  src/interfaces/mpi.c ("MPI: Cannot create context for %s", "MPI: Unable to load any plugin") and 22.05's
  src/common/mpi.c / plugin.c ("cannot create mpi context for mpi/pmix_v3", "Couldn't find the specified
  plugin name for mpi/pmix_v3 looking at all files"), srun's "Invalid MPI type" (RUN304),
  src/plugins/mpi/pmix PMIXP_ERROR and src/plugins/mpi/pmi2, src/api/pmi_server.c PMK_KVS_Barrier (RUN304,
  tier 1), src/common/slurm_errno.c "Invalid job credential" / "Job credential expired" as srun's task
  launch prints them (RUN374);
- PRRTE (openpmix/prrte master) src/mca/schizo/base/schizo_base_stubs.c "%s has detected an attempt to run as
  root." and Open MPI 1.x-4.x's mpirun text (RUN392); help-errmgr-base.txt "An PRTE daemon has unexpectedly
  failed after launch and before\\ncommunicating back" (wrapped: RUN303); Open MPI 4.x's external PMIx
  component "OPAL ERROR: Unreachable in file ext3x_client.c" (RUN222); help-mpi-btl-openib.txt
  [init-fail-no-mem] (RUN385);
- Intel MPI 2019-2021's i_hydra: "HYD_spawn (...hydra_spawn.c:151): execvp error on file" (RUN389 when the
  program is not found, RUN304 else), "unable to
  run bstrap_proxy on node2 (pid .., exit code 65280)" (RUN303), "MPIDI_OFI_mpi_init_hook(1627): OFI
  addrinfo() failed (...:No data available)" (RUN294, as MPICH's fi_getinfo).
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import check_root, root_finding

SLURM_ENV = [
    (
        "srun: fatal: SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.\n",
        ["SLURM_MEM_PER_CPU", "SLURM_MEM_PER_GPU", "SLURM_MEM_PER_NODE"],
    ),
    (
        "sbatch: fatal: SLURM_GPUS_PER_TASK is mutually exclusive with --ntasks-per-gpu and "
        "SLURM_NTASKS_PER_GPU\n",
        ["SLURM_GPUS_PER_TASK", "SLURM_NTASKS_PER_GPU"],
    ),
    (
        "srun: fatal: --gpus-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU\n",
        ["SLURM_NTASKS_PER_GPU"],
    ),
]


@pytest.mark.parametrize(("log", "names"), SLURM_ENV)
def test_slurm_inherited_environment_conflict(log: str, names: list[str]) -> None:
    check_root(log, "RUN395", {"variables": names, "reason": "inherited_slurm_env"})


SLURM_LAUNCH = [
    "srun: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.\n",
    "srun: fatal: --gpus-per-node and --gres=gpu are mutually exclusive.\n",
    # 17.x-22.05: plugin.c's line, then mpi.c's
    "srun: error: Couldn't find the specified plugin name for mpi/pmix_v3 looking at all files\n"
    "srun: error: cannot find mpi plugin for mpi/pmix_v3\n"
    "srun: error: cannot create mpi context for mpi/pmix_v3\n"
    "srun: error: invalid MPI type 'pmix_v3', --mpi=list for acceptable types\n",
    "srun: error: MPI: Cannot create context for mpi/pmix\n",
    "srun: error: MPI: Unable to load any plugin\n",
    "srun: error: CPU binding outside of job step allocation, allocated CPUs are: 0x000000000000000F.\n",
]


@pytest.mark.parametrize("log", SLURM_LAUNCH)
def test_slurm_and_hydra_launch_refusals_are_launch_failures(log: str) -> None:
    check_root(log, "RUN304")


def test_intel_hydra_that_cannot_find_the_program_is_the_environment() -> None:
    log = (
        "[proxy:0:0@gpu-01] HYD_spawn "
        "(../../../../../src/pm/i_hydra/libhydra/spawn/intel/hydra_spawn.c:151): "
        "execvp error on file python (No such file or directory)\n"
    )
    check_root(log, "RUN389", {"executable": "python"})


def test_srun_mpi_plugin_is_named() -> None:
    check_root(
        "srun: error: cannot create mpi context for mpi/pmix_v3\n", "RUN304", {"mpi_plugin": "pmix_v3"}
    )


SLURM_PMI = [
    (
        "slurmstepd: error:  mpi/pmix_v3: pmixp_p2p_send: gpu-02 [1]: pmixp_utils.c:467: "
        "send failed, rc=1001, "
        "exceeded the retry limit\n",
        "pmix_v3",
    ),
    (
        "slurmstepd: error:  mpi/pmix_v4: _errhandler: gpu-01 [1]: pmixp_client_v2.c:211: "
        "Error handler invoked: "
        "status = -25, source = [slurm.pmix.1234.0:1]\n",
        "pmix_v4",
    ),
    ("srun: error: mpi/pmi2: failed to send temp kvs to compute nodes\n", "pmi2"),
    ("srun: error: PMK_KVS_Barrier duplicate request from task 0\n", "pmi1"),
]


@pytest.mark.parametrize(("log", "pmi"), SLURM_PMI)
def test_slurm_pmi_exchange_failures(log: str, pmi: str) -> None:
    check_root(log, "RUN304", {"pmi": pmi})


def test_a_rank_crash_outranks_the_pmi_echo() -> None:
    log = (
        "slurmstepd: error:  mpi/pmix_v4: _errhandler: gpu-01 [1]: pmixp_client_v2.c:211: "
        "Error handler invoked: "
        "status = -25, source = [slurm.pmix.1234.0:1]\n"
        "srun: error: gpu-01: task 1: Out Of Memory\n"
    )
    root = root_finding(log)
    assert root is not None and root.code != "RUN304", root


CREDENTIAL = [
    "srun: error: Task launch for StepId=1234.0 failed on node gpu-02: Invalid job credential\n",
    "srun: error: Task launch for 36.0 failed on node cn131: Job credential expired\n",
    "srun: error: Application launch failed: Invalid job credential\n",
]


@pytest.mark.parametrize("log", CREDENTIAL)
def test_slurm_job_credential_rejected_is_authentication(log: str) -> None:
    check_root(log, "RUN374")


ROOT = [
    "--------------------------------------------------------------------------\n"
    "mpirun has detected an attempt to run as root.\n\n"
    "Running as root is *strongly* discouraged as any mistake (e.g., in\n"
    "defining TMPDIR) or bug can result in catastrophic damage to the OS\n",
    "prterun has detected an attempt to run as root.\n",
    "[1,0]<stderr>:mpirun has detected an attempt to run as root.\n",
]


@pytest.mark.parametrize("log", ROOT)
def test_mpirun_refuses_root(log: str) -> None:
    check_root(log, "RUN392", {"reason": "run_as_root"})


def test_prte_daemon_failed_wrapped_is_remote_launch() -> None:
    log = (
        "--------------------------------------------------------------------------\n"
        "An PRTE daemon has unexpectedly failed after launch and before\n"
        "communicating back to mpirun. This could be caused by a number\n"
        "of factors, including an inability to create a connection back\n"
    )
    check_root(log, "RUN303")


BSTRAP = [
    (
        "[mpiexec@gpu-01] check_exit_codes "
        "(../../../../../src/pm/i_hydra/libhydra/demux/hydra_demux_poll.c:117): "
        "unable to run bstrap_proxy on gpu-02 (pid 1234, exit code 65280)\n",
        255,
    ),
    ("[mpiexec@gpu-01] Error: Unable to run bstrap_proxy on gpu-02 (pid 1234, exit code 256)\n", 1),
]


@pytest.mark.parametrize(("log", "status"), BSTRAP)
def test_intel_mpi_bootstrap_proxy(log: str, status: int) -> None:
    check_root(log, "RUN303", {"host": "gpu-02", "exit_status": status})


def test_openib_memlock() -> None:
    log = (
        "--------------------------------------------------------------------------\n"
        "The OpenFabrics (openib) BTL failed to initialize while trying to\n"
        "allocate some locked memory.  This typically can indicate that the\n"
        "memlock limits are set too low.  For most HPC installations, the\n"
        'memlock limits should be set to "unlimited".  The failure occured\n'
        "here:\n\n"
        "  Local host:    gpu-01\n"
        "  OMPI source:   btl_openib.c:1234\n"
        "  Function:      ibv_create_cq()\n"
        "  Device:        mlx5_0\n"
        "  Memlock limit: 65536\n"
    )
    check_root(log, "RUN385", {"memlock_limit": "65536", "reason": "memlock_limit"})


def test_ompi_ext3x_unreachable_is_the_pmi_exchange() -> None:
    log = (
        "[gpu-01:12345] OPAL ERROR: Unreachable in file ext3x_client.c at line 112\n"
        "*** An error occurred in MPI_Init\n"
        "*** on a NULL communicator\n"
    )
    check_root(log, "RUN222")


def test_intel_mpi_ofi_addrinfo_is_the_fabric_provider() -> None:
    log = (
        "Abort(1091215) on node 0 (rank 0 in comm 0): Fatal error in PMPI_Init: Other MPI error, "
        "error stack:\n"
        "MPIR_Init_thread(138)........:\n"
        "MPID_Init(1183)..............:\n"
        "MPIDI_OFI_mpi_init_hook(1627): OFI addrinfo() failed "
        "(ofi_init.c:1627:MPIDI_OFI_mpi_init_hook:No data available)\n"
    )
    check_root(log, "RUN294")


SILENT = [
    # srun -v on a healthy launch
    "srun: debug:  mpi/pmix_v4: init: gpu-01 [0]: mpi_pmix.c:191: PMIx plugin loaded\n",
    "srun: Job 1234 step creation temporarily disabled, retrying (Requested nodes are busy)\n"
    "srun: Step created for StepId=1234.0\n",
    "srun: Warning: can't run 1 processes on 2 nodes, setting nnodes to 1\n",
    # the DefMemPerCPU note slurmctld logs is a configuration message, not the job's
    "slurmctld: error: DefMemPerCPU ignored, since it's mutually exclusive with DefMemPerNode\n",
]


@pytest.mark.parametrize("log", SILENT)
def test_healthy_scheduler_lines_are_silent(log: str) -> None:
    assert root_finding(log) is None

"""The integration examples under examples/, run as a cluster would run them.

Slurm is not here, so `scontrol` and `srun` are stubs on PATH that record their arguments
(srun runs its command once, locally, as a one-node step would); pgdoctor is the real one,
made to fail by a real misconfiguration (NCCL_SOCKET_IFNAME naming no interface, or a
/dev/shm threshold above the machine's). Stubs of pgdoctor itself only stand in for the
failures of pgdoctor (an exit 3, a hang, garbage output) the scripts must survive.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pgdoctor.checks import load_all
from pgdoctor.checks.base import CODES
from tests.helpers.paths import TESTS

ROOT = TESTS.parent
EXAMPLES = ROOT / "examples"
BASE_ENV = {
    k: v
    for k, v in os.environ.items()
    if not k.startswith(
        (
            "NCCL_",
            "TORCH_",
            "PGDOCTOR",
            "SLURM",
            "PREFLIGHT_",
            "RANK",
            "WORLD_SIZE",
            "MASTER_",
            "LOCAL_",
            "NPROC",
        )
    )
}

SCONTROL = f"""#!{sys.executable}
import json, os, sys
with open(os.environ["STUB_LOG"], "a") as fh:
    fh.write(json.dumps(["scontrol", *sys.argv[1:]]) + "\\n")
if sys.argv[1:3] == ["show", "hostnames"]:
    print("node-a")
sys.exit(int(os.environ.get("SCONTROL_RC", "0")))
"""

# A one-node step: the options the examples use, anything else is an error (so a typo in an
# example fails here instead of on a cluster).
SRUN = f"""#!{sys.executable}
import json, os, subprocess, sys
args = sys.argv[1:]
with open(os.environ["STUB_LOG"], "a") as fh:
    fh.write(json.dumps(["srun", *args]) + "\\n")
known = ("--nodes=", "--ntasks=", "--ntasks-per-node=", "--time=", "--output=", "--error=")
opts = {{}}
while args and args[0].startswith("-"):
    a = args.pop(0)
    if not a.startswith(known):
        sys.exit("srun stub: unknown option " + a)
    k, v = a.split("=", 1)
    opts[k] = v.replace("%N", "node-a")
out = open(opts["--output"], "w") if "--output" in opts else None
err = open(opts["--error"], "w") if "--error" in opts else None
sys.exit(subprocess.call(args, stdout=out, stderr=err))
"""

TORCHRUN = f"""#!{sys.executable}
import json, os, sys
with open(os.environ["STUB_LOG"], "a") as fh:
    fh.write(json.dumps(["torchrun", *sys.argv[1:]]) + "\\n")
"""


def write_exe(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """scontrol and srun stubs, and `pgdoctor` running this checkout's pgdoctor."""
    d = tmp_path / "bin"
    d.mkdir()
    write_exe(d / "scontrol", SCONTROL)
    write_exe(d / "srun", SRUN)
    write_exe(d / "pgdoctor", f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m pgdoctor "$@"\n')
    return d


def calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "stub.log"
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def run_script(
    script: Path,
    tmp_path: Path,
    bin_dir: Path,
    env: dict[str, str],
    args: tuple[str, ...] = (),
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    full = {
        **BASE_ENV,
        "PATH": f"{bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin",
        "STUB_LOG": str(tmp_path / "stub.log"),
        **env,
    }
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, timeout=timeout, env=full, cwd=tmp_path
    )


def title(code: str) -> str:
    load_all()
    return CODES[code].title


# --- Slurm prolog and epilog ----------------------------------------------------------------

SLURM = {"SLURMD_NODENAME": "node-a", "SLURM_JOB_ID": "4242"}


@pytest.fixture
def slurm_env(tmp_path: Path) -> dict[str, str]:
    logs = tmp_path / "logs"
    return {**SLURM, "PGDOCTOR_LOG_DIR": str(logs)}


def config(tmp_path: Path, shm_bytes: int) -> str:
    path = tmp_path / "pgdoctor.toml"
    path.write_text(f"[host]\nmin_shm_bytes = {shm_bytes}\n")
    return str(path)


@pytest.mark.parametrize(("script", "rc"), [("prolog.sh", 1), ("epilog.sh", 0)])
def test_failing_host_check_drains_the_node_with_the_finding(
    script: str, rc: int, tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    # A /dev/shm threshold of 1 PiB: a real ENV501 in the host area, which the defaults check.
    env = {**slurm_env, "PGDOCTOR_CONFIG": config(tmp_path, 1 << 50)}
    proc = run_script(EXAMPLES / "slurm" / script, tmp_path, bin_dir, env)
    assert proc.returncode == rc, proc.stderr
    drains = [c for c in calls(tmp_path) if c[:2] == ["scontrol", "update"]]
    assert len(drains) == 1, calls(tmp_path)
    assert drains[0][2:4] == ["nodename=node-a", "state=drain"]
    reason = drains[0][4]
    assert reason.startswith(f"reason=pgdoctor: ENV501 {title('ENV501')}"), reason
    assert "ENV501" in proc.stderr
    kept = Path(slurm_env["PGDOCTOR_LOG_DIR"]) / f"{script.split('.')[0]}-4242.json"
    assert any(f["code"] == "ENV501" for f in json.loads(kept.read_text())["findings"])


def test_prolog_drains_on_the_jobs_nccl_setting_and_can_let_the_job_run(
    tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    env = {
        **slurm_env,
        "NCCL_SOCKET_IFNAME": "nosuchif",
        "PGDOCTOR_SKIP": "launch,software",
        "PGDOCTOR_CONFIG": config(tmp_path, 1),
        "PGDOCTOR_FAIL_JOB": "0",
    }
    proc = run_script(EXAMPLES / "slurm" / "prolog.sh", tmp_path, bin_dir, env)
    assert proc.returncode == 0, proc.stderr
    drains = [c for c in calls(tmp_path) if c[:2] == ["scontrol", "update"]]
    assert [d[4] for d in drains] == [f"reason=pgdoctor: ENV401 {title('ENV401')}"]


@pytest.mark.parametrize("script", ["prolog.sh", "epilog.sh"])
def test_clean_node_passes_without_scontrol_and_without_leftovers(
    script: str, tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    env = {**slurm_env, "PGDOCTOR_CONFIG": config(tmp_path, 1)}
    proc = run_script(EXAMPLES / "slurm" / script, tmp_path, bin_dir, env)
    assert proc.returncode == 0, proc.stderr
    assert calls(tmp_path) == []
    assert list(Path(slurm_env["PGDOCTOR_LOG_DIR"]).iterdir()) == []


@pytest.mark.parametrize("script", ["prolog.sh", "epilog.sh"])
def test_configuration_error_is_logged_and_the_node_stays(
    script: str, tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[host\nmin_shm_bytes = ")
    proc = run_script(
        EXAMPLES / "slurm" / script, tmp_path, bin_dir, {**slurm_env, "PGDOCTOR_CONFIG": str(bad)}
    )
    assert proc.returncode == 0
    assert calls(tmp_path) == []
    assert "configuration error" in proc.stderr and "bad.toml" in proc.stderr


STUB_PGDOCTOR = {
    "incomplete": "echo '{\"findings\": []}'; exit 3",
    "garbage": "echo 'this is not json'; exit 1",
    "crash": "echo 'Segmentation fault' >&2; exit 139",
}


@pytest.mark.parametrize("script", ["prolog.sh", "epilog.sh"])
@pytest.mark.parametrize("behaviour", sorted(STUB_PGDOCTOR))
def test_pgdoctors_own_failures_never_drain(
    script: str, behaviour: str, tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    stub = write_exe(tmp_path / "fake-pgdoctor", f"#!/bin/sh\n{STUB_PGDOCTOR[behaviour]}\n")
    proc = run_script(EXAMPLES / "slurm" / script, tmp_path, bin_dir, {**slurm_env, "PGDOCTOR": str(stub)})
    assert proc.returncode == 0, proc.stderr
    assert calls(tmp_path) == []
    assert "node left in service" in proc.stderr


def test_missing_pgdoctor_never_drains(tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]) -> None:
    env = {**slurm_env, "PGDOCTOR": str(tmp_path / "not-installed")}
    proc = run_script(EXAMPLES / "slurm" / "prolog.sh", tmp_path, bin_dir, env)
    assert proc.returncode == 0 and calls(tmp_path) == []
    assert "cannot run" in proc.stderr


def test_hung_pgdoctor_is_killed_and_never_drains(
    tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    pid_file = tmp_path / "hung.pid"
    stub = write_exe(tmp_path / "hung-pgdoctor", f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 300\n")
    env = {**slurm_env, "PGDOCTOR": str(stub), "PGDOCTOR_TIMEOUT": "1", "PGDOCTOR_GRACE": "1"}
    start = time.monotonic()
    proc = run_script(EXAMPLES / "slurm" / "prolog.sh", tmp_path, bin_dir, env, timeout=30)
    assert time.monotonic() - start < 15
    assert proc.returncode == 0 and calls(tmp_path) == []
    assert "was killed" in proc.stderr
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize("script", ["prolog.sh", "epilog.sh"])
def test_scontrol_failure_fails_the_script_so_slurm_drains(
    script: str, tmp_path: Path, bin_dir: Path, slurm_env: dict[str, str]
) -> None:
    env = {**slurm_env, "PGDOCTOR_CONFIG": config(tmp_path, 1 << 50), "SCONTROL_RC": "1"}
    proc = run_script(EXAMPLES / "slurm" / script, tmp_path, bin_dir, env)
    assert proc.returncode == 1
    assert "could not drain" in proc.stderr


# --- torchrun job script --------------------------------------------------------------------

TRAIN = EXAMPLES / "torchrun" / "train_with_preflight.sh"


@pytest.fixture
def torchrun_stub(bin_dir: Path) -> Path:
    return write_exe(bin_dir / "torchrun", TORCHRUN)


def test_preflight_failure_stops_the_job_before_torchrun(
    tmp_path: Path, bin_dir: Path, torchrun_stub: Path
) -> None:
    env = {
        "NCCL_SOCKET_IFNAME": "nosuchif",
        "PREFLIGHT_DIR": str(tmp_path / "pf"),
        "PREFLIGHT_LEVEL": "quick",
    }
    proc = run_script(TRAIN, tmp_path, bin_dir, env, ("train.py", "--epochs", "1"))
    assert proc.returncode == 1
    assert "pre-flight FAILED" in proc.stderr and "ENV401" in proc.stderr
    assert not any(c[0] == "torchrun" for c in calls(tmp_path))


def test_clean_preflight_starts_torchrun_with_the_training_command(
    tmp_path: Path, bin_dir: Path, torchrun_stub: Path
) -> None:
    env = {"PREFLIGHT_DIR": str(tmp_path / "pf"), "NPROC_PER_NODE": "2"}
    proc = run_script(TRAIN, tmp_path, bin_dir, env, ("train.py", "--epochs", "1"))
    assert proc.returncode == 0, proc.stderr
    assert calls(tmp_path) == [
        ["torchrun", "--nnodes=1", "--nproc-per-node=2", "--standalone", "train.py", "--epochs", "1"]
    ]
    reports = list((tmp_path / "pf").glob("*.json"))
    assert len(reports) == 1 and "findings" in json.loads(reports[0].read_text())


def test_under_slurm_preflight_and_torchrun_run_once_per_node(
    tmp_path: Path, bin_dir: Path, torchrun_stub: Path
) -> None:
    env = {
        "SLURM_JOB_ID": "77",
        "SLURM_JOB_NUM_NODES": "2",
        "SLURM_JOB_NODELIST": "node-[a-b]",
        "SLURM_GPUS_ON_NODE": "8",
        "PREFLIGHT_DIR": str(tmp_path / "pf"),
        "NCCL_SOCKET_IFNAME": "nosuchif",
        "PREFLIGHT_LEVEL": "quick",
    }
    proc = run_script(TRAIN, tmp_path, bin_dir, env, ("train.py",))
    assert proc.returncode == 1, proc.stderr
    assert "node-a: ENV401" in proc.stderr  # the report srun wrote for node-a
    srun = [c for c in calls(tmp_path) if c[0] == "srun"]
    assert (
        len(srun) == 1
        and "--ntasks-per-node=1" in srun[0]
        and "--output=" + str(tmp_path / "pf" / "%N.json") in srun[0]
    )
    assert srun[0][srun[0].index("pgdoctor") :][:2] == ["pgdoctor", "check"]

    (tmp_path / "stub.log").unlink()
    del env["NCCL_SOCKET_IFNAME"]
    proc = run_script(TRAIN, tmp_path, bin_dir, env, ("train.py",))
    assert proc.returncode == 0, proc.stderr
    launched = [c for c in calls(tmp_path) if c[0] == "torchrun"]
    assert launched == [
        [
            "torchrun",
            "--nnodes=2",
            "--nproc-per-node=8",
            "--rdzv-backend=c10d",
            "--rdzv-endpoint=node-a:29500",
            "--rdzv-id=77",
            "train.py",
        ]
    ]
    srun = [c for c in calls(tmp_path) if c[0] == "srun"]
    assert srun[-1][:3] == ["srun", "--nodes=2", "--ntasks=2"] and "torchrun" in srun[-1]


@pytest.mark.slow
def test_real_torchrun_trains_after_a_clean_preflight(
    tmp_path: Path, bin_dir: Path, no_leftover_children: None
) -> None:
    """No stub for torchrun: two gloo ranks all-reduce after the pre-flight passed."""
    train = tmp_path / "train.py"
    train.write_text(
        "import os, torch, torch.distributed as dist\n"
        "dist.init_process_group('gloo')\n"
        "t = torch.tensor([dist.get_rank() + 1.0])\n"
        "dist.all_reduce(t)\n"
        "open(os.path.join(os.environ['OUT_DIR'], f'rank{dist.get_rank()}.txt'), 'w').write(str(t.item()))\n"
        "dist.destroy_process_group()\n"
    )
    env = {"PREFLIGHT_DIR": str(tmp_path / "pf"), "NPROC_PER_NODE": "2", "OUT_DIR": str(tmp_path)}
    proc = run_script(TRAIN, tmp_path, bin_dir, env, (str(train),), timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert [(tmp_path / f"rank{r}.txt").read_text() for r in (0, 1)] == ["3.0", "3.0"]


# --- Kubernetes init container --------------------------------------------------------------


def k8s_pod_spec() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml", reason="PyYAML is in the test extra")
    docs = list(yaml.safe_load_all((EXAMPLES / "k8s" / "initcontainer.yaml").read_text()))
    assert len(docs) == 1 and docs[0]["apiVersion"] == "batch/v1" and docs[0]["kind"] == "Job"
    return docs[0]["spec"]["template"]["spec"]  # type: ignore[no-any-return]


def test_k8s_init_container_matches_the_trainer() -> None:
    spec = k8s_pod_spec()
    (init,) = spec["initContainers"]
    (trainer,) = spec["containers"]
    assert init["image"] == trainer["image"]
    assert init["env"] == trainer["env"] and any(e["name"].startswith("NCCL_") for e in init["env"])
    assert init["resources"]["limits"]["nvidia.com/gpu"] == trainer["resources"]["limits"]["nvidia.com/gpu"]
    assert {"cpu", "memory"} <= set(init["resources"]["requests"])
    shm = [v for v in spec["volumes"] if v.get("emptyDir", {}).get("medium") == "Memory"]
    assert len(shm) == 1
    for c in (init, trainer):
        assert {"name": shm[0]["name"], "mountPath": "/dev/shm"} in c["volumeMounts"]
    assert init["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert spec["restartPolicy"] == "Never"


def test_k8s_init_container_runs_a_real_pgdoctor_command_line() -> None:
    init = k8s_pod_spec()["initContainers"][0]
    argv = [*init["command"], *init.get("args", [])]
    assert argv[:2] == ["pgdoctor", "check"] and all(isinstance(a, str) for a in argv)
    env = {**BASE_ENV, **{e["name"]: e["value"] for e in init["env"]}}
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", *argv[1:]], capture_output=True, text=True, timeout=180, env=env
    )
    # 1 (this machine has no 8 GPUs) or 3 (NVML unavailable); 2 would be a bad command line.
    assert proc.returncode in (0, 1, 3), proc.stderr
    assert "GPU health" in proc.stdout and "Traceback" not in proc.stderr


# --- what the examples and their docs say about exit codes ------------------------------------

INCOMPLETE_STUB = f"""#!{sys.executable}
import json, sys
why = "probe gpu unavailable: driver_not_loaded: no NVIDIA driver"
print(json.dumps({{"findings": [], "incomplete": [why]}}))
sys.exit(3)
"""


@pytest.mark.parametrize("strict", ["0", "1"])
def test_torchrun_script_on_exit_3_prints_the_reports_incomplete_reasons(
    tmp_path: Path, bin_dir: Path, torchrun_stub: Path, strict: str
) -> None:
    write_exe(bin_dir / "pgdoctor", INCOMPLETE_STUB)
    env = {"PREFLIGHT_DIR": str(tmp_path / "pf"), "PREFLIGHT_STRICT": strict}
    proc = run_script(TRAIN, tmp_path, bin_dir, env, ("train.py",))
    assert "pgdoctor exited 3" in proc.stderr
    assert "probe gpu unavailable: driver_not_loaded" in proc.stderr and ".stderr" not in proc.stderr
    started = any(c[0] == "torchrun" for c in calls(tmp_path))
    assert (proc.returncode, started) == ((3, False) if strict == "1" else (0, True)), proc.stderr


def test_the_examples_doc_explains_each_examples_exit_3() -> None:
    doc = (ROOT / "docs" / "examples.md").read_text()
    section = doc.split("### Exit 3 (incomplete) in the examples", 1)[1].split("\n## ", 1)[0]
    for name in ("Slurm prolog/epilog", "torchrun script", "Kubernetes init container"):
        assert name in section
    yaml_text = (EXAMPLES / "k8s" / "initcontainer.yaml").read_text()
    assert "Exit 3" in yaml_text and "pip install pgdoctor`" not in yaml_text
    assert "pgdoctor is not\n  on PyPI" in doc and "pip wheel --no-deps -w dist ." in doc


@pytest.mark.skipif(os.path.isdir("/sys/class/infiniband"), reason="this host has InfiniBand")
def test_net_doc_says_what_check_only_net_exits_without_infiniband() -> None:
    doc = " ".join((ROOT / "docs" / "net.md").read_text().split())
    assert "`check --only net` exits 0 on a node without InfiniBand" in doc
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "check", "--only", "net", "--level", "quick", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=BASE_ENV,
    )
    report = json.loads(proc.stdout)
    ib = next(r for r in report["results"] if r["name"] == "ib")
    assert ib["status"] == "unavailable" and ib["reason"].startswith("not_present")
    assert proc.returncode == (1 if any(f["severity"] == "fail" for f in report["findings"]) else 0)
    assert not report["incomplete"]


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_the_wheel_the_k8s_example_installs_builds_from_the_repository(tmp_path: Path) -> None:
    yaml_text = (EXAMPLES / "k8s" / "initcontainer.yaml").read_text()
    assert "python3 -m pip wheel --no-deps -w dist /path/to/pgdoctor" in yaml_text
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(tmp_path.glob("pgdoctor-*-py3-none-any.whl"))

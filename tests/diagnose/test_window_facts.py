"""Facts a root line lacks, taken from the lines around it: the rank when every prefixed line there names
one rank (a traceback printed under "[rank3]:" whose last line lost its prefix), the NCCL version when
they print one (nothing when they name two), the pid the line itself names."""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.api import diagnose_sources

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 388.00 MiB. GPU 0 has a total capacity of "
    "9.68 GiB of which 95.75 MiB is free."
)


def _root(text: str):  # type: ignore[no-untyped-def]
    return next(f for f in diagnose_sources([("log", text)]) if f.severity.value in ("warn", "fail"))


def test_a_root_line_without_prefix_takes_the_one_rank_around_it() -> None:
    log = (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank3]:   File "train.py", line 67, in <module>\n'
        "[rank3]:     trainer.train()\n" + OOM + "\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom"
    assert root.facts["rank"] == 3 and root.facts["rank_from"] == "the rank prefixes around it"


def test_two_ranks_around_it_name_none() -> None:
    log = (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 67, in <module>\n'
        "[rank3]:     trainer.train()\n" + OOM + "\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and "rank" not in root.facts


def test_one_prefixed_line_is_not_enough() -> None:
    root = _root("[rank3]: step 10 loss 0.1\n" + OOM + "\n")
    assert root.category == "cuda_oom" and "rank" not in root.facts


def test_the_line_s_own_prefix_wins() -> None:
    log = "[rank3]: Traceback (most recent call last):\n[rank3]:     trainer.train()\n[rank5]: " + OOM + "\n"
    root = _root(log)
    assert root.facts["rank"] == 5 and "rank_from" not in root.facts


def test_the_nccl_version_printed_around_the_root_is_a_fact() -> None:
    log = (
        "node1:1234:1234 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
        "node1:1234:1300 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<35555> "
        "failed : Software caused connection abort\n"
    )
    root = _root(log)
    assert root.category == "nccl_network" and root.facts["nccl_version"] == "2.18.1+cuda12.1"
    assert root.facts["nccl_cuda_version"] == "12.1" and "nccl_release" not in root.facts


@pytest.mark.parametrize(
    ("printed", "version"),
    [
        ("21.0.3", "2.10.3"),
        ("21.1.4", "2.11.4"),
        ("20.9.9", "2.9.9"),
        ("21.0.12", "2.10.12"),
        ("2.7.8", "2.7.8"),
    ],
)
def test_torch_1x_misprinted_nccl_versions_are_read_back(printed: str, version: str) -> None:
    # torch 1.8-1.11 decoded NCCL >= 2.9's code (major*10000+minor*100+patch) as major*1000+minor*100+patch
    root = _root(
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system "
        "error, "
        f"NCCL version {printed}\n"
    )
    assert root.facts["nccl_version"] == printed  # as printed, what a reader greps the log for
    assert root.facts.get("nccl_release") == (version if printed != version else None)


def test_two_lines_that_print_one_version_two_ways_name_it() -> None:
    log = (
        "node1:1234:1234 [0] NCCL INFO NCCL version 2.10.3+cuda11.1\n"
        "node1:1234:1300 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<35555> "
        "failed : Software caused connection abort\n"
        "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled system "
        "error, "
        "NCCL version 21.0.3\n"
    )
    facts = _root(log).facts  # one release, not two versions: the banner's or torch's print of it
    assert facts["nccl_version"] == "2.10.3+cuda11.1" or facts["nccl_release"] == "2.10.3"


def test_two_nccl_versions_around_the_root_name_none() -> None:
    log = (
        "node1:1234:1234 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n"
        "node2:1234:1234 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n"
        "node1:1234:1300 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<35555> "
        "failed : Software caused connection abort\n"
    )
    assert "nccl_version" not in _root(log).facts


def test_the_pid_the_root_line_names_is_a_fact() -> None:
    root = _root(
        "RuntimeError: DataLoader worker (pid 7579) is killed by signal: Bus error. It is possible that "
        "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n"
    )
    assert root.facts["pid"] == 7579

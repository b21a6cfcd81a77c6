from __future__ import annotations

import pytest

from pgdoctor.knowledge.launchenv import expand_hostlist, parse_launch


@pytest.mark.parametrize(
    ("text", "hosts"),
    [
        ("node1", ["node1"]),
        ("gpu[01-03,07],login1", ["gpu01", "gpu02", "gpu03", "gpu07", "login1"]),
        ("a[1-2]-b[8-9]", ["a1-b8", "a1-b9", "a2-b8", "a2-b9"]),
        ("n[098-101]", ["n098", "n099", "n100", "n101"]),
    ],
)
def test_slurm_hostlists_expand_like_scontrol(text: str, hosts: list[str]) -> None:
    assert expand_hostlist(text) == hosts


@pytest.mark.parametrize("text", ["gpu[01-03", "gpu]1", "gpu[3-1]", "gpu[a-b]"])
def test_bad_hostlists_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        expand_hostlist(text)


def test_torch_variables_win_and_slurm_fills_the_master() -> None:
    info = parse_launch(
        {
            "SLURM_PROCID": "3",
            "SLURM_NTASKS": "8",
            "SLURM_LOCALID": "1",
            "SLURM_NTASKS_PER_NODE": "4(x2)",
            "SLURM_JOB_NODELIST": "gpu[10-11]",
        }
    )
    assert (info.launcher, info.rank, info.world_size, info.local_rank, info.local_world_size) == (
        "slurm",
        3,
        8,
        1,
        4,
    )
    assert info.master_addr == "gpu10" and info.nodes == ("gpu10", "gpu11")
    torchrun = parse_launch(
        {"RANK": "5", "WORLD_SIZE": "16", "SLURM_PROCID": "1", "TORCHELASTIC_RUN_ID": "x"}
    )
    assert (torchrun.launcher, torchrun.rank, torchrun.world_size) == ("torchrun", 5, 16)


def test_malformed_integers_are_reported_not_guessed() -> None:
    info = parse_launch({"RANK": "one", "WORLD_SIZE": "2"})
    assert info.rank is None and info.malformed == {"RANK": "one"}

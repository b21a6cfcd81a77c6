"""`repro --device auto` decides "cpu" from /dev without importing torch when no GPU device node is
there (torch.cuda.is_available() is False without one), and asks torch otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgdoctor.cli.repro import _gpu_nodes


@pytest.mark.parametrize(
    ("nodes", "gpu"),
    [
        ((), False),
        (("null", "zero", "tty0", "shm"), False),
        (("nvidiactl", "nvidia0"), True),
        (("nvhost-ctrl-gpu",), True),  # Jetson
        (("dxg",), True),  # WSL2
        (("kfd", "dri"), True),  # ROCm
    ],
)
def test_gpu_device_nodes(tmp_path: Path, nodes: tuple[str, ...], gpu: bool) -> None:
    for name in nodes:
        (tmp_path / name).touch()
    assert _gpu_nodes(str(tmp_path)) is gpu


def test_a_dev_that_cannot_be_listed_asks_torch(tmp_path: Path) -> None:
    assert _gpu_nodes(str(tmp_path / "missing")) is True

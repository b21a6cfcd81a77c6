"""scripts/test-setup.sh installs torch from PyTorch's CPU wheel index when it answers and the plain
pin when it does not, and the README says the same. The index is a loopback HTTP server here (and
a closed loopback port for the unreachable case); the dry run prints the torch command."""

from __future__ import annotations

import http.server
import os
import re
import socket
import subprocess
import threading
from pathlib import Path

from tests.helpers.paths import ROOT

SCRIPT = ROOT / "scripts" / "test-setup.sh"


def _dry_run(index: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PGDOCTOR_TORCH_INDEX=index, PGDOCTOR_SETUP_DRY_RUN="1")
    return subprocess.run(
        ["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=60, check=True
    )


def test_a_reachable_cpu_index_serves_torch(tmp_path: Path) -> None:
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "index.html").write_text("<a href='torch-2.13.0+cpu.whl'>t</a>")
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(tmp_path))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        out = _dry_run(url)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
    assert out.stdout.strip() == f"python -m pip install --quiet --index-url {url} torch==2.13.0"
    assert "CPU wheel index" in out.stderr


def test_an_unreachable_index_falls_back_to_the_plain_pin_and_says_so() -> None:
    with socket.socket() as s:  # a loopback port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = _dry_run(f"http://127.0.0.1:{port}")
    assert out.stdout.strip() == "python -m pip install --quiet torch==2.13.0"
    assert "not reachable" in out.stderr and "plain pin" in out.stderr and "CUDA build" in out.stderr


def test_the_readme_names_the_index_and_the_fallback_the_script_uses() -> None:
    script = SCRIPT.read_text()
    readme = re.sub(r"\s+", " ", (ROOT / "README.md").read_text())
    index = re.search(r"PGDOCTOR_TORCH_INDEX-(\S+?)\}", script)
    assert index and index.group(1) in readme
    limit = re.search(r"PROBE_TIMEOUT_S=(\d+)", script)
    assert limit and f"{limit.group(1)} s limit" in readme
    pin = re.search(r'TORCH_PIN="([^"]+)"', script)
    assert pin and f"plain pin `{pin.group(1)}`" in readme

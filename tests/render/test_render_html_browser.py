"""The HTML report in a real headless browser (Debian's chromium, installed by scripts/test-setup.sh).

What the browser built (its DOM after parsing and layout) must hold the findings and the
bandwidth plot, and a screenshot must show the plot's lines in their colours: a page that the
browser refused (bad markup, blocked resource) or drew empty fails here, not on a user's desk.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest

from pgdoctor.model import ProbeResult, Report, Snapshot, Status
from pgdoctor.render import get_renderer
from pgdoctor.render.svg import PALETTE
from tests.helpers.render_reports import collective_measurements, gpu_finding, rich_report, sweep_rows

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="chromium is not installed (scripts/test-setup.sh installs it when run as root)"
)

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
]


def chromium(*args: str, timeout: float = 60.0) -> str:
    """Runs chromium with a throw-away profile; kills its whole process group on timeout."""
    assert BROWSER is not None
    profile = tempfile.mkdtemp(prefix="pgdoctor-chromium-")
    proc = subprocess.Popen(
        [BROWSER, *FLAGS, f"--user-data-dir={profile}", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"chromium did not finish within {timeout} s")
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            # The browser's helpers (zygote, GPU process) share its session; none may outlive it.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(profile, ignore_errors=True)
    assert proc.returncode == 0, f"chromium exited {proc.returncode}"
    return out


def png_pixels(path: Path) -> tuple[int, int, set[tuple[int, int, int]]]:
    """Width, height and the set of colours of an 8-bit RGB/RGBA non-interlaced PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    height = bpp = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours: set[tuple[int, int, int]] = set()
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        colours.update(zip(line[0::bpp], line[1::bpp], line[2::bpp]))
        prev = line
    return width, height, colours


def write_html(report: Report, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        get_renderer("html")(report, fh, False)


@pytest.fixture(scope="module")
def rich_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    report = rich_report()
    path = tmp_path_factory.mktemp("html") / "report.html"
    write_html(report, path)
    return report, path


def test_findings_and_plot_are_in_the_rendered_dom(
    rich_page: tuple[Report, Path], no_leftover_children: None
) -> None:
    report, path = rich_page
    dom = chromium("--dump-dom", path.as_uri())
    assert "<body>" in dom and "</html>" in dom
    for code in {f.code for f in report.findings}:
        assert f'data-code="{code}"' in dom, code
    assert 'class="bw-plot"' in dom and dom.count("<polyline") >= 2 and "<circle" in dom
    assert 'class="timeline"' in dom and ">rank 1</text>" in dom
    assert ">What it means</h4>" in dom  # a playbook was rendered with the finding


@pytest.mark.slow
def test_finding_and_plot_are_drawn_in_a_screenshot(tmp_path: Path, no_leftover_children: None) -> None:
    # A short page (one finding without a playbook, the sweep) keeps the pure-Python PNG decoding
    # to a few seconds, and the series colours can come from nothing but the plot.
    finding = dataclasses.replace(gpu_finding(), code="TST901", slug="test-only")
    snap = Snapshot(
        "node-a",
        1.8e9,
        "0",
        "standard",
        (
            ProbeResult(
                "collectives",
                "collectives",
                Status.PASSED,
                "",
                1.0,
                tuple(collective_measurements(sweep_rows())),
            ),
        ),
    )
    page = tmp_path / "plot.html"
    write_html(Report("check", snap, (finding,)), page)
    shot = tmp_path / "shot.png"
    chromium(f"--screenshot={shot}", "--window-size=820,1000", page.as_uri())
    width, height, colours = png_pixels(shot)
    assert (width, height) == (820, 1000)

    def rgb(hex_colour: str) -> tuple[int, int, int]:
        return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))  # type: ignore[return-value]

    assert rgb(PALETTE[0]) in colours and rgb(PALETTE[1]) in colours, "the plot's two series are not drawn"
    assert rgb("#c62828") in colours, "the fail badge of the finding is not drawn"

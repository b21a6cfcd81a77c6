"""`pgdoctor plan`: units, the textbook cases, layouts, findings and their fixture pairs, CLI errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgdoctor.cli import main
from pgdoctor.knowledge.interconnects import PRESETS, get
from pgdoctor.knowledge.units import (
    GIB,
    fmt_seconds_fixed,
    parse_bytes,
    parse_count,
    parse_gbps,
    seconds_decimals,
)
from pgdoctor.model import Measurement, ProbeResult, Snapshot, Status
from pgdoctor.plan.comm import Fabric, bubble_fraction, ring_all_reduce_s, ring_gather_s
from pgdoctor.plan.layouts import PlanInput, evaluate, plan
from pgdoctor.plan.measured import links_from_snapshot
from pgdoctor.plan.memory import OPTIMIZERS, PRECISIONS, MemoryInput, activation_bytes_per_layer, state_bytes
from pgdoctor.plan.model import hf_config_from_text, shape_from_hf_config, shape_from_params
from tests.helpers.paths import FIXTURES

CODE_DIR = FIXTURES / "codes"
MIXED, ADAM = PRECISIONS["bf16-mixed"], OPTIMIZERS["adamw"]


def run_plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    with pytest.raises(SystemExit) as exc:
        main(["plan", *args, "--json"])
    out = capsys.readouterr().out
    return int(exc.value.code or 0), json.loads(out) if out.strip() else {}


# --- units -------------------------------------------------------------------------------


def test_counts_and_sizes_parse_with_decimal_and_binary_units() -> None:
    assert parse_count("7B") == 7_000_000_000
    assert parse_count("1.3B") == 1_300_000_000
    assert parse_count("125M") == 125_000_000
    assert parse_count("350k") == 350_000
    assert parse_count("2T") == 2 * 10**12
    assert parse_bytes("80GiB") == 80 * 2**30
    assert parse_bytes("80GB") == 80 * 10**9
    assert parse_bytes("512MiB") == 512 * 2**20
    assert parse_gbps("25") == 25.0
    assert parse_gbps("200Gbit/s") == 25.0
    assert parse_gbps("1 Gbps") == 0.125
    for bad in ("", "7X", "-1B", "GB", "0"):
        with pytest.raises(ValueError):
            parse_count(bad)
    with pytest.raises(ValueError):
        parse_bytes("80 GiX")


def test_a_column_of_seconds_has_one_precision_set_by_its_smallest_value() -> None:
    places = seconds_decimals([0.0737, 0.0097, 0.232, 0.0])
    assert places == 4  # 0.0097 keeps two significant digits
    assert [fmt_seconds_fixed(t, places) for t in (0.0737, 0.0097, 0.232, 0.0)] == [
        "0.0737",
        "0.0097",
        "0.2320",
        "-",
    ]
    assert seconds_decimals([0.01, 0.2]) == 3 and seconds_decimals([]) == 3 and seconds_decimals([1e-12]) == 6
    assert fmt_seconds_fixed(1e-9, 6) == "<0.000001"  # too small to show is not shown as a 0


# --- textbook cases ----------------------------------------------------------------------


def test_ring_all_reduce_of_100m_fp32_over_1gbit_takes_3_2_s_for_2_ranks_and_nears_6_4_s_for_many() -> None:
    grads = 100e6 * 4  # 400 MB
    gbit = 0.125  # 1 Gbit/s in GB/s
    assert ring_all_reduce_s(grads, 2, gbit) == pytest.approx(3.2)
    assert ring_all_reduce_s(grads, 1000, gbit) == pytest.approx(6.4, rel=0.002)
    times = [ring_all_reduce_s(grads, n, gbit) for n in (2, 4, 8, 64, 1024)]
    assert times == sorted(times) and times[-1] < 6.4
    # With the eth-1g preset (TCP goodput, not line rate) and its latency, still "about 3.2 s".
    eth = get("eth-1g")
    assert ring_all_reduce_s(grads, 2, eth.busbw_gbps, eth.latency_us, messages=16) == pytest.approx(
        3.2, rel=0.08
    )


def test_7b_mixed_adam_needs_112_gb_of_states_and_fits_80gb_only_sharded() -> None:
    p = 7_000_000_000
    states = state_bytes(p, 0, MIXED, ADAM)
    assert states.total == 16 * p == 112_000_000_000
    assert (states.params, states.grads, states.master, states.optimizer) == (2 * p, 2 * p, 4 * p, 8 * p)
    assert (
        state_bytes(p, 0, PRECISIONS["fp32"], OPTIMIZERS["sgd"]).params == 28_000_000_000
    )  # fp32 weights fit
    assert states.total > 80 * GIB
    assert state_bytes(p, 0, MIXED, ADAM, zero=3, dp=8).total == 16 * p // 8 + 4  # 14 GB (+ Adam's step)
    # The full plan: plain DDP over 8 GPUs does not fit 80 GiB, ZeRO-3 over the same 8 does.
    shape = shape_from_params(p)
    inp = PlanInput(
        MemoryInput(shape, MIXED, ADAM, seq_len=4096, micro_batch=1),
        Fabric(8, 1, get("nvlink4"), get("ib-ndr")),
        80 * GIB,
    )
    assert not evaluate(inp, 8, 1, 1, 0).fits
    zero3 = evaluate(inp, 8, 1, 1, 3)
    assert zero3.fits and zero3.memory.states.total == pytest.approx(14e9, rel=0.01)


def test_zero_stages_follow_the_zero_paper_formulas() -> None:
    p, n = 1_000_000, 8
    for zero, expected in ((0, 16 * p), (1, 4 * p + 12 * p // n), (2, 2 * p + 14 * p // n), (3, 16 * p // n)):
        # One flat unit when sharded: one 4-byte Adam step.
        assert state_bytes(p, 0, MIXED, ADAM, zero, n).total == expected + (4 if zero else 0)
    # Units are padded to a multiple of the group size each: 3 units of 5 over 4 ranks own 2 each.
    assert (
        state_bytes(15, 3, PRECISIONS["fp32"], OPTIMIZERS["sgd"], 3, 4, units=[5, 5, 5]).params == 3 * 2 * 4
    )
    # Megatron's bf16 keeps fp32 gradients: 18 B per parameter.
    assert state_bytes(p, 0, PRECISIONS["bf16-mixed-fp32-grads"], ADAM).total == 18 * p
    # torch's Adam keeps one 4-byte step per tensor; SGD without momentum keeps nothing.
    assert state_bytes(p, 10, MIXED, ADAM).optimizer == 8 * p + 40
    assert state_bytes(p, 10, PRECISIONS["fp32"], OPTIMIZERS["sgd"]).total == 8 * p


def test_activations_follow_korthikanti() -> None:
    s, b, h, a = 2048, 1, 4096, 32
    sbh = s * b * h
    assert activation_bytes_per_layer(s, b, h, a, 1, "none", flash_attention=False) == sbh * (
        34 + 5 * a * s / h
    )
    assert (
        activation_bytes_per_layer(s, b, h, a, 8, "none", flash_attention=False)
        == sbh * (34 + 5 * a * s / h) / 8
    )
    assert activation_bytes_per_layer(s, b, h, a, 1, "selective", flash_attention=False) == 34 * sbh
    assert activation_bytes_per_layer(s, b, h, a, 1, "none", flash_attention=True) == 34 * sbh
    assert activation_bytes_per_layer(s, b, h, a, 4, "full") == 2 * sbh / 4
    assert activation_bytes_per_layer(s, b, h, a, 1, "full", act_scale=2.0) == 4 * sbh


def test_bubble_and_gather_factors() -> None:
    assert bubble_fraction(1, 1) == 0
    assert bubble_fraction(4, 4) == pytest.approx(3 / 7)
    assert bubble_fraction(8, 32) == pytest.approx(7 / 39)
    assert ring_gather_s(1e9, 4, 1.0) == pytest.approx(0.75)


# --- model shapes ------------------------------------------------------------------------


def test_hf_configs_count_parameters_like_transformers() -> None:
    llama2_7b = {
        "model_type": "llama",
        "hidden_size": 4096,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "intermediate_size": 11008,
        "vocab_size": 32000,
        "max_position_embeddings": 4096,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
    }
    assert shape_from_hf_config(llama2_7b).params == 6_738_415_616
    gpt2 = {
        "model_type": "gpt2",
        "n_embd": 768,
        "n_layer": 12,
        "n_head": 12,
        "vocab_size": 50257,
        "n_positions": 1024,
    }
    assert shape_from_hf_config(gpt2).params == 124_439_808
    pythia_160m = {
        "model_type": "gpt_neox",
        "hidden_size": 768,
        "num_hidden_layers": 12,
        "num_attention_heads": 12,
        "intermediate_size": 3072,
        "vocab_size": 50304,
        "tie_word_embeddings": False,
    }
    assert shape_from_hf_config(pythia_160m).params == 162_322_944
    llama3_8b = dict(llama2_7b, num_key_value_heads=8, intermediate_size=14336, vocab_size=128256)
    assert shape_from_hf_config(llama3_8b).params == 8_030_261_248


def test_params_only_keeps_the_count_and_borrows_a_known_shape() -> None:
    shape = shape_from_params(7_000_000_000)
    assert (shape.layers, shape.hidden, shape.heads) == (32, 4096, 32)
    assert shape.params == 7_000_000_000
    assert shape_from_params(70_000_000_000).layers == 80
    assert shape_from_params(125_000_000, layers=4).layers == 4


# --- layouts -----------------------------------------------------------------------------


def test_layouts_are_valid_ranked_and_the_recommended_one_fits() -> None:
    inp = PlanInput(
        MemoryInput(shape_from_params(7_000_000_000), MIXED, ADAM, seq_len=4096, micro_batch=1),
        Fabric(8, 2, get("nvlink4"), get("ib-ndr")),
        80 * GIB,
    )
    layouts = plan(inp)
    assert layouts[0].fits
    assert all(lay.dp * lay.tp * lay.pp == 16 for lay in layouts)
    assert not any(lay.pp > 1 and lay.zero > 1 for lay in layouts)
    fits = [lay.fits for lay in layouts]
    assert fits == sorted(fits, reverse=True)  # everything that fits comes first
    # Tensor parallelism across the two nodes is slower than inside one.
    by = {(lay.dp, lay.tp, lay.pp, lay.zero): lay for lay in layouts}
    assert by[(1, 16, 1, 0)].traffic.tp_crosses_nodes and not by[(2, 8, 1, 0)].traffic.tp_crosses_nodes
    assert by[(1, 16, 1, 0)].traffic.tp_s > by[(2, 8, 1, 0)].traffic.tp_s


def test_dp_across_nodes_shares_the_nics() -> None:
    shape = shape_from_params(1_300_000_000)
    mi = MemoryInput(shape, MIXED, ADAM, seq_len=2048, micro_batch=1)
    one_nic = evaluate(PlanInput(mi, Fabric(8, 2, get("nvlink4"), get("ib-ndr"), 1), 80 * GIB), 16, 1, 1, 0)
    eight = evaluate(PlanInput(mi, Fabric(8, 2, get("nvlink4"), get("ib-ndr"), 8), 80 * GIB), 16, 1, 1, 0)
    assert one_nic.traffic.dp_busbw_gbps == pytest.approx(47.0)
    assert eight.traffic.dp_busbw_gbps == pytest.approx(370.0)  # capped by NVLink inside the node
    assert one_nic.traffic.dp_s > 3 * eight.traffic.dp_s


def test_every_preset_says_where_its_numbers_come_from() -> None:
    assert set(PRESETS) == {
        "nvlink3",
        "nvlink4",
        "nvlink5",
        "xgmi3",
        "pcie4",
        "pcie5",
        "ib-hdr",
        "ib-ndr",
        "eth-100g",
        "eth-10g",
        "eth-1g",
    }
    for link in PRESETS.values():
        assert 0 < link.busbw_gbps <= link.line_gbps and link.latency_us > 0 and link.source


# --- measured bandwidth from a snapshot --------------------------------------------------


def _snapshot(measurements: list[Measurement]) -> Snapshot:
    return Snapshot(
        "node1",
        0.0,
        "0",
        "standard",
        (ProbeResult("collectives", "collectives", Status.PASSED, measurements=tuple(measurements)),),
    )


def test_snapshot_busbw_becomes_the_link_and_unreadable_values_are_skipped() -> None:
    from pgdoctor.model import Reason, Unavailable

    # Keys as the collective probe writes them (probes/collectives/launch.py), plus noise.
    snap = _snapshot(
        [
            Measurement("collectives.world_size", 4),
            Measurement("collectives.nodes", 1),
            Measurement("collectives.all_reduce.1048576", {"busbw_gbps": 99.0, "bytes": 1048576}),
            Measurement("collectives.all_reduce.busbw_peak_gbps", 5.25, "GB/s"),
            Measurement("collectives.all_gather.busbw_peak_gbps", 9.0, "GB/s"),
            Measurement("collectives.all_reduce.latency_us", 60.0, "us"),
            Measurement("collectives.send_recv.latency_us", 25.0, "us"),
            Measurement("collectives.broken.busbw_peak_gbps", Unavailable(Reason.TIMEOUT), "GB/s"),
            Measurement("collectives.flag.busbw_peak_gbps", True, "GB/s"),
            Measurement("collectives.inter_node.all_reduce.busbw_gbps", 1000.0, "Mb/s"),
            Measurement("software.torch.version", "2.13"),
        ]
    )
    links = links_from_snapshot(snap)
    # All-reduce is preferred over a higher all-gather; its latency is per ring hop: 60 / (2 x 3).
    assert links.intra is not None and links.intra.busbw_gbps == 5.25 and links.intra.latency_us == 10.0
    assert links.inter is not None and links.inter.busbw_gbps == pytest.approx(1.0)
    empty = links_from_snapshot(_snapshot([]))
    assert empty.intra is None and empty.inter is None and "no collectives" in empty.notes[0]


def test_a_multi_node_snapshot_measures_the_inter_node_link() -> None:
    snap = _snapshot(
        [
            Measurement("collectives.world_size", 16),
            Measurement("collectives.nodes", 2),
            Measurement("collectives.all_reduce.busbw_peak_gbps", 180.0, "GB/s"),
        ]
    )
    links = links_from_snapshot(snap)
    assert links.intra is None and links.inter is not None and links.inter.busbw_gbps == 180.0


def test_cli_from_snapshot_and_explicit_bandwidth(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    snap = tmp_path / "snap.json"
    snap.write_text(_snapshot([Measurement("collectives.all_reduce.busbw_peak_gbps", 2.0, "GB/s")]).dumps())
    common = ["--params", "125M", "--gpus-per-node", "2", "--gpu-memory", "16GiB", "--tp", "1"]
    rc, data = run_plan(capsys, *common, "--from", str(snap))
    assert rc == 0 and data["plan"]["interconnect"]["intra"]["busbw_gbps"] == 2.0
    rc, data = run_plan(capsys, *common, "--from", str(snap), "--bandwidth-intra", "8")
    assert data["plan"]["interconnect"]["intra"]["busbw_gbps"] == 8.0  # the explicit option wins


# --- CLI and findings --------------------------------------------------------------------


def test_cli_json_has_the_numbers_of_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    rc, data = run_plan(
        capsys,
        "--params",
        "7B",
        "--gpus-per-node",
        "8",
        "--nodes",
        "1",
        "--gpu-memory",
        "80GiB",
        "--precision",
        "bf16-mixed",
        "--optimizer",
        "adamw",
        "--seq-len",
        "4096",
        "--micro-batch",
        "1",
        "--interconnect",
        "nvlink4",
    )
    assert rc == 0 and data["findings"] == []
    best = data["plan"]["recommended"]
    assert best == data["plan"]["layouts"][0] and best["fits"]
    mem = best["memory"]
    assert (
        mem["total"]
        == mem["params"]
        + mem["grads"]
        + mem["master"]
        + mem["optimizer"]
        + mem["activations"]
        + mem["buffers"]
        + mem["overhead"]
    )
    plain = next(lay for lay in data["plan"]["layouts"] if (lay["dp"], lay["zero"]) == (8, 0))
    assert not plain["fits"] and plain["headroom_bytes"] < 0


def test_console_output_shows_the_table_and_findings(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["plan", "--params", "7B", "--gpus-per-node", "1", "--gpu-memory", "80GiB", "--seq-len", "4096"])
    out = capsys.readouterr().out
    assert exc.value.code == 1
    assert "do not fit" in out and "PLAN101" in out and "pgdoctor explain PLAN101" in out


def _layout_table(out: str) -> tuple[str, list[str], list[list[str]]]:
    """(title, column names, rows of cells) of the 'Layouts that fit' table in console output."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Layouts that fit"))
    # Column names contain single spaces ("dp comm"); rich separates columns by two or more.
    header = re.split(r"\s{2,}", lines[start + 1].strip())
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith("..."):
            break
        rows.append(line.split())
    return lines[start].strip(), header, rows


def test_layout_table_prints_every_time_in_seconds_with_one_precision() -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "plan",
            "--params",
            "7B",
            "--gpus-per-node",
            "8",
            "--gpu-memory",
            "80GiB",
            "--nodes",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    title, header, rows = _layout_table(proc.stdout)
    assert "times per step in seconds" in title
    cols = [header.index(name) for name in ("dp comm", "tp comm", "pp comm", "step")]
    assert rows and all(len(r) == len(header) for r in rows), (header, rows)
    cells = [r[c] for r in rows for c in cols]
    assert not [c for c in cells if re.search(r"(ms|us|s)$", c)], cells
    numbers = [c for c in cells if c != "-"]
    assert numbers and all(re.fullmatch(r"<?\d+\.\d+", c) for c in numbers), cells
    assert len({len(c.split(".")[1]) for c in numbers}) == 1, cells  # one precision across the columns
    # the layout whose dp comm is 10 ms (the cell that used to read "10ms") reads as seconds now
    assert any(float(r[header.index("dp comm")]) == pytest.approx(0.010, abs=5e-4) for r in rows), rows


def _fixture_pairs() -> list[str]:
    return sorted(p.parent.name for p in CODE_DIR.glob("PLAN*/bad.plan.json"))


@pytest.mark.parametrize("code", _fixture_pairs())
def test_plan_fixture_fires_on_bad_and_not_on_good(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    for kind, should in (("bad", True), ("good", False)):
        args = json.loads((CODE_DIR / code / f"{kind}.plan.json").read_text())["args"]
        _, data = run_plan(capsys, *args)
        codes = {f["code"] for f in data["findings"]}
        assert (code in codes) is should, f"{code} {kind}: {codes}"


def test_every_plan_code_has_a_fixture_pair() -> None:
    from pgdoctor.checks import load_all
    from pgdoctor.checks.base import CODES

    load_all()
    assert _fixture_pairs() == sorted(c for c in CODES if c.startswith("PLAN"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--gpu-memory", "80GiB"], "exactly one of --params"),
        (["--params", "7B", "--model", "x.json", "--gpu-memory", "80GiB"], "exactly one of --params"),
        (["--params", "7Q", "--gpu-memory", "80GiB"], "--params"),
        (["--params", "7B", "--gpu-memory", "80 potatoes"], "--gpu-memory"),
        (
            ["--params", "7B", "--gpu-memory", "80GiB", "--interconnect", "carrier-pigeon"],
            "unknown interconnect",
        ),
        (["--params", "7B", "--gpu-memory", "80GiB", "--tp", "3"], "no valid layout"),
        (["--params", "7B", "--gpu-memory", "80GiB", "--bandwidth-inter", "fast"], "--bandwidth-inter"),
        (["--model", "/nonexistent/config.json", "--gpu-memory", "80GiB"], "cannot read"),
        (["--params", "7B"], "--gpu-memory"),
        (
            ["--params", "7B", "--hidden", "1000", "--heads", "3", "--gpu-memory", "80GiB"],
            "not divisible by 3 heads",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], message: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pgdoctor", "plan", *args], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr


def test_model_config_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(
        json.dumps(
            {
                "model_type": "gpt2",
                "n_embd": 768,
                "n_layer": 12,
                "n_head": 12,
                "vocab_size": 50257,
                "n_positions": 1024,
            }
        )
    )
    assert hf_config_from_text(cfg.read_text(), str(cfg)).params == 124_439_808
    rc, data = run_plan(capsys, "--model", str(cfg), "--gpus-per-node", "2", "--gpu-memory", "24GiB")
    assert rc == 0 and data["plan"]["model"]["params"] == 124_439_808
    assert data["plan"]["inputs"]["seq_len"] == 1024  # from n_positions
    # An explicit head size need not be hidden / heads (Gemma-7B: 16 heads of 256 over 3072).
    gemma = tmp_path / "gemma.json"
    gemma.write_text(
        json.dumps(
            {
                "model_type": "gemma",
                "hidden_size": 3072,
                "num_hidden_layers": 28,
                "num_attention_heads": 16,
                "num_key_value_heads": 16,
                "head_dim": 256,
                "intermediate_size": 24576,
                "vocab_size": 256000,
                "hidden_act": "gelu",
                "tie_word_embeddings": True,
            }
        )
    )
    rc, data = run_plan(capsys, "--model", str(gemma), "--gpus-per-node", "8", "--gpu-memory", "80GiB")
    assert rc == 0 and data["plan"]["model"]["head_dim"] == 256
    (tmp_path / "moe.json").write_text(
        json.dumps(
            {
                "model_type": "mixtral",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "vocab_size": 10,
                "num_local_experts": 8,
            }
        )
    )
    # A mixture of experts is read as one (tests/plan/test_plan_setups.py checks its counts).
    rc, data = run_plan(capsys, "--model", str(tmp_path / "moe.json"), "--gpu-memory", "24GiB")
    assert data["plan"]["model"]["moe"]["experts"] == 8
    (tmp_path / "gqa.json").write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 3,
                "vocab_size": 10,
            }
        )
    )
    with pytest.raises(SystemExit) as exc:
        main(["plan", "--model", str(tmp_path / "gqa.json"), "--gpu-memory", "24GiB"])
    assert exc.value.code == 2
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(SystemExit) as exc:
        main(["plan", "--model", str(tmp_path / "bad.json"), "--gpu-memory", "24GiB"])
    assert exc.value.code == 2


def test_plan_does_not_import_torch() -> None:
    code = (
        "import sys; from pgdoctor.cli import main\n"
        "try:\n    main(['plan', '--params', '7B', '--gpu-memory', '80GiB', '--json'])\nexcept SystemExit:\n "
        "   pass\n"
        "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert "NO-TORCH" in proc.stderr, proc.stderr


def test_a_layout_with_under_5_percent_free_ranks_after_roomier_ones() -> None:
    inp = PlanInput(
        MemoryInput(shape_from_params(7_000_000_000), MIXED, ADAM, seq_len=4096, micro_batch=1),
        Fabric(8, 1, get("nvlink4"), get("ib-ndr")),
        80 * GIB,
    )
    probe = evaluate(inp, 8, 1, 1, 1)
    # Give the GPU just 2% more than this layout needs: it fits, tightly.
    tight_inp = PlanInput(inp.memory, inp.fabric, int(probe.memory.total * 1.02))
    layouts = plan(tight_inp)
    tight = next(lay for lay in layouts if (lay.dp, lay.tp, lay.pp, lay.zero) == (8, 1, 1, 1))
    assert tight.fits and tight.tight
    roomy = [lay for lay in layouts if lay.fits and not lay.tight]
    assert roomy and layouts.index(tight) > max(layouts.index(lay) for lay in roomy)


@given(params=st.integers(10**6, 10**12), dp=st.integers(1, 4096))
def test_zero_stages_never_need_more_than_the_stage_before(params: int, dp: int) -> None:
    totals = [state_bytes(params, 100, MIXED, ADAM, zero, dp).total for zero in (0, 1, 2, 3)]
    assert totals == sorted(totals, reverse=True)
    assert totals[3] * dp >= 16 * params  # sharding never loses bytes


@given(nbytes=st.floats(1.0, 1e12), n=st.integers(2, 10_000), bw=st.floats(1e-3, 1e3))
def test_ring_all_reduce_moves_between_one_and_two_buffers(nbytes: float, n: int, bw: float) -> None:
    t = ring_all_reduce_s(nbytes, n, bw)
    assert nbytes / (bw * 1e9) * (1 - 1e-9) <= t < 2 * nbytes / (bw * 1e9)
    assert ring_all_reduce_s(nbytes, n + 1, bw) >= t


@settings(max_examples=25, deadline=None)
@given(nodes=st.integers(1, 4), gpn=st.sampled_from([1, 2, 4, 8]), billions=st.integers(1, 80))
def test_every_candidate_uses_every_gpu_and_the_best_fits_or_none_does(
    nodes: int, gpn: int, billions: int
) -> None:
    inp = PlanInput(
        MemoryInput(shape_from_params(billions * 10**9), MIXED, ADAM, seq_len=2048, micro_batch=1),
        Fabric(gpn, nodes, get("nvlink4"), get("ib-ndr")),
        80 * GIB,
    )
    layouts = plan(inp)
    assert layouts and all(lay.dp * lay.tp * lay.pp == nodes * gpn for lay in layouts)
    assert layouts[0].fits == any(lay.fits for lay in layouts)


def test_when_nothing_fits_the_finding_says_from_how_many_nodes_it_would(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rc, data = run_plan(
        capsys, "--params", "70B", "--gpus-per-node", "8", "--gpu-memory", "80GiB", "--seq-len", "4096"
    )
    assert rc == 1 and data["plan"]["recommended"] is None
    (finding,) = [f for f in data["findings"] if f["code"] == "PLAN101"]
    more = data["plan"]["fits_from"]
    assert more["nodes"] > 1 and more["fits"] and not more["tight"]
    assert f"fits from {more['nodes']} nodes" in finding["message"]
    assert finding["facts"]["fits_from_gpus"] == 8 * more["nodes"]
    # One node fewer than that has nothing that fits with room to spare.
    from pgdoctor.plan.layouts import smallest_fit

    inp = PlanInput(
        MemoryInput(shape_from_params(70 * 10**9), MIXED, ADAM, seq_len=4096, micro_batch=1),
        Fabric(8, more["nodes"] - 1, get("nvlink4"), get("ib-ndr")),
        80 * GIB,
    )
    assert not any(lay.fits and not lay.tight for lay in plan(inp))
    assert smallest_fit(inp) is not None


@pytest.mark.slow
def test_plan_from_a_real_collective_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_leftover_children: None
) -> None:
    """pgdoctor collect runs the collective probe on 2 local gloo ranks; plan --from uses what it measured."""
    snap = tmp_path / "snap.json"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pgdoctor",
            "collect",
            "--only",
            "collectives",
            "--nproc",
            "2",
            "-o",
            str(snap),
        ],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    measured = Snapshot.loads(snap.read_text())
    busbw = measured.value("collectives.all_reduce.busbw_peak_gbps")
    latency = measured.value("collectives.all_reduce.latency_us")
    assert busbw and latency
    rc, data = run_plan(
        capsys, "--params", "125M", "--gpus-per-node", "2", "--gpu-memory", "16GiB", "--from", str(snap)
    )
    intra = data["plan"]["interconnect"]["intra"]
    assert rc == 0 and intra["busbw_gbps"] == busbw
    assert intra["latency_us"] == pytest.approx(latency / 2)  # per ring hop: 2(n-1) = 2 hops on 2 ranks
    assert any("collectives.all_reduce.busbw_peak_gbps" in note for note in data["plan"]["notes"])

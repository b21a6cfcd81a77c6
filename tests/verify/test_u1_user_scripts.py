"""User-style training scripts (tests/fixtures/verify/u1/, see its README) through `pgdoctor verify`
on 2 real gloo ranks: each classic bug named with its cause, the correct scripts equivalent, and
the entries that break the contract (data() that is not a function of its arguments, a model
torch cannot train on the CPU, a build() that hangs) answered as the entry's error, not as a
verdict on the model.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("verify_u1")]

import pgdoctor  # noqa: E402
from pgdoctor.verify.entry import EntryError  # noqa: E402

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "verify" / "u1"
# A run that fails on a rank or is the entry's error ends its spawn of the ranks, and the runs after it
# go to a new spawn (torch imported again in each rank): those come last, so that the runs that finish
# share one spawn and each failing run after the first costs one spawn, not two.
ITEMS = [
    ("plain_ddp_script", "ddp"),
    ("lightning_like", "ddp"),
    ("compiled", "ddp"),
    ("fsdp_transformer", "fsdp"),
    ("loss_divided_by_world", "ddp"),
    ("fsdp_seed_by_rank", "fsdp"),
    ("lm_padding_differs", "ddp"),
    ("tiny_gpt_dropout", "ddp"),
    ("hf_dict_output", "ddp"),
    ("resnet_batchnorm", "ddp"),
    ("sparse_embedding", "ddp"),
    ("checkpointed", "ddp"),
    ("unused_on_rank1", "ddp"),
    ("rank1_exits", "ddp"),
    ("data_reads_env", "ddp"),
    ("data_from_iterator", "ddp"),
    ("resnet_syncbn", "ddp"),
    ("build_inits_process_group", "ddp"),
    ("resnet_batchnorm", "tp"),
]


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    got = pgdoctor.verify.verify_many(
        [(f"{HERE / name}.py:build", strategy) for name, strategy in ITEMS], nproc=2
    )
    return {
        name if strategy in ("ddp", "fsdp") else f"{name}@{strategy}": res
        for (name, strategy), res in zip(ITEMS, got)
    }


def _codes(res: object) -> list[str]:
    assert not isinstance(res, EntryError), res
    return [f.code for f in res.findings]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "name",
    [
        "plain_ddp_script",
        "lightning_like",
        "compiled",
        "fsdp_transformer",
        "hf_dict_output",
        "sparse_embedding",
        "checkpointed",
    ],
)
def test_correct_scripts_are_equivalent(name: str, results: dict[str, object]) -> None:
    res = results[name]
    assert not isinstance(res, EntryError), res
    assert res.equivalent and _codes(res) == [], [f.message for f in res.findings]  # type: ignore[attr-defined]


def test_a_mean_divided_by_the_world_size_is_not_called_a_sum(results: dict[str, object]) -> None:
    res = results["loss_divided_by_world"]
    assert _codes(res) == ["VER103"]
    assert res.cause == "loss_divided_by_world_size"  # type: ignore[attr-defined]
    finding = res.findings[0]  # type: ignore[attr-defined]
    assert finding.facts["loss_batch_ratio"] == pytest.approx(1.0)
    assert "division by the world size" in finding.message and "'sum'" not in finding.message


def test_fsdp_ranks_seeded_by_rank_are_different_models_not_a_rank_dependent_forward(
    results: dict[str, object],
) -> None:
    res = results["fsdp_seed_by_rank"]
    assert _codes(res) == ["VER114"]
    assert res.cause == "initial_weights_differ"  # type: ignore[attr-defined]
    assert res.findings[0].facts["ranks"] == [1]  # type: ignore[attr-defined]
    assert "0.weight" in res.findings[0].message  # type: ignore[attr-defined]


def test_padding_that_differs_across_ranks_is_unequal_token_counts(results: dict[str, object]) -> None:
    res = results["lm_padding_differs"]
    assert _codes(res) == ["VER107"]
    assert res.cause == "unequal_token_counts"  # type: ignore[attr-defined]
    assert res.findings[0].facts["counted_targets"][0] == [40, 24]  # type: ignore[attr-defined]


def test_dropout_in_a_tiny_gpt_is_a_warning_with_the_eval_mode_comparison(results: dict[str, object]) -> None:
    res = results["tiny_gpt_dropout"]
    assert _codes(res) == ["VER110"] and res.equivalent and res.eval_mode_rerun  # type: ignore[attr-defined]


def test_batchnorm_in_a_resnet_is_named_and_tp_with_nothing_to_split_is_refused(
    results: dict[str, object],
) -> None:
    res = results["resnet_batchnorm"]
    assert _codes(res) == ["VER102"]
    assert "stem.1, layer1.bn1, layer1.bn2" in res.findings[0].message  # type: ignore[attr-defined]
    tp = results["resnet_batchnorm@tp"]
    assert isinstance(tp, EntryError) and "nothing would be split" in str(tp) and "(head)" in str(tp)


def test_parameters_unused_on_one_rank_are_named_with_that_rank(results: dict[str, object]) -> None:
    res = results["unused_on_rank1"]
    assert _codes(res) == ["VER105"]
    msg = res.findings[0].message  # type: ignore[attr-defined]
    assert "aux.weight on rank(s) 1" in msg
    assert res.first_divergent["param"] == "aux.weight"  # type: ignore[attr-defined]


def test_the_rank_that_died_first_is_named_first(results: dict[str, object]) -> None:
    res = results["rank1_exits"]
    assert _codes(res) == ["VER101"]
    finding = res.findings[0]  # type: ignore[attr-defined]
    assert finding.facts["first_failed_rank"] == 1
    assert finding.message.index("rank 1 exited with 7") < finding.message.index("rank 0 raised")


def _ctx(errors: dict, ended_at: dict) -> object:
    from types import SimpleNamespace

    from pgdoctor.probes.processes import ChildOutcome

    outcomes = {r: ChildOutcome(r, ("x",), 1, False, 1.0, "", "", ended_at=t) for r, t in ended_at.items()}
    return SimpleNamespace(errors=errors, run=SimpleNamespace(rank_outcome=outcomes.__getitem__))


def _err(message: str, at: float) -> dict:
    return {"type": "RuntimeError", "message": message, "step": 2, "phase": "run", "traceback": "", "at": at}


@pytest.mark.parametrize(
    ("errors", "ended_at", "first"),
    [
        # Both processes seen to end at one poll: the rank whose peer went away is not the first.
        ({0: _err("[pair.cc:553] Connection closed by peer [127.0.0.1]:1", 5.0)}, {0: 5.0, 1: 5.0}, 1),
        ({1: _err("NCCL: remote process exited or there was a network error", 4.0)}, {0: 9.0, 1: 9.0}, 0),
        # Two ranks' own errors: the one recorded first, whatever the process ends say.
        ({0: _err("shape mismatch", 7.5), 1: _err("CUDA error", 7.2)}, {0: 8.0, 1: 8.0}, 1),
        # A silent death and an own error: the earlier on the one clock.
        ({1: _err("ValueError: bad batch", 3.0)}, {0: 2.0, 1: 3.1}, 0),
    ],
)
def test_failure_order_is_own_time_not_the_poll(errors: dict, ended_at: dict, first: int) -> None:
    from pgdoctor.verify.detectors import _failure_order

    ctx = _ctx(errors, ended_at)
    assert min(ended_at, key=lambda r: _failure_order(ctx, r)) == first  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("data_reads_env", "data(1, 2, 0) gave other samples on rank 1 than in the one-process reference"),
        ("data_from_iterator", "depends on something besides its arguments"),
        ("resnet_syncbn", "SyncBatchNorm (stem.1, layer1.bn1, layer1.bn2), which torch runs on GPUs only"),
        ("build_inits_process_group", "the entry calls torch.distributed.init_process_group"),
    ],
)
def test_entries_that_cannot_be_compared_are_the_entrys_error(name: str, says: str, results: dict) -> None:
    res = results[name]
    assert isinstance(res, EntryError), res
    assert says in f"{res}\n{res.user_traceback}"


def test_a_build_that_hangs_is_the_entrys_error_at_the_deadline(tmp_path: Path) -> None:
    with pytest.raises(EntryError, match=r"the one-process reference did not finish within --timeout"):
        pgdoctor.verify(f"{HERE / 'hangs_in_build.py'}:build", nproc=2, timeout_s=6)


def test_cli_exit_codes_for_a_hang_and_a_syncbn_model(tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for name, timeout in (("hangs_in_build", "6"), ("resnet_syncbn", "60")):
        p = subprocess.run(
            [sys.executable, "-m", "pgdoctor", "verify", f"{HERE / name}.py:build", "--timeout", timeout],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert p.returncode == 2, p.stderr
        assert "Traceback" not in p.stderr and p.stdout == ""
        assert p.stderr.strip().splitlines()[-1].startswith("pgdoctor: error: ")


def test_ver116_fixtures_a_summed_logged_loss_warns_and_a_copy_does_not() -> None:
    codes = Path(__file__).resolve().parents[1] / "fixtures" / "codes" / "VER116"
    bad, good = pgdoctor.verify.verify_many(
        [f"{codes / 'bad.py'}:build", f"{codes / 'good.py'}:build"], nproc=2
    )
    assert not isinstance(bad, EntryError) and not isinstance(good, EntryError)
    assert bad.equivalent and _codes(bad) == ["VER116"]
    facts = bad.findings[0].facts
    assert facts["loss_ratio"] == pytest.approx(2.0, rel=1e-4) and facts["step"] == 0
    assert good.equivalent and _codes(good) == []

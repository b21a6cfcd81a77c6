"""`pgdoctor verify` of a GPT-2-small-sized model (124M parameters, 12 TransformerEncoderLayer
blocks, fp32) on 2 real gloo ranks, under DDP and under FSDP (fully_shard): equivalent, every
process within about 3x the model's training state. Both runs go in one verify_many batch (one
spawn of the ranks, torch imported once), the run `verify` alone gives each; a rank's peak
memory is its process's, so the FSDP run's counts the DDP run's too. One step (forward, backward,
update, each compared with the reference): what this adds is the scale (chunked comparison, memory),
while the multi-step behaviour is the matrix's (test_verify.py) on smaller models; a second step cost
21 CPU-s more. Marked `large` as well as `slow`: about 30 s alone on a 2-core host."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytestmark = pytest.mark.xdist_group("verify_large")  # one worker runs the batch for both tests

import pgdoctor  # noqa: E402
from pgdoctor.verify.examples import GPT_SIZES, gpt  # noqa: E402

# torch's own import and allocator in each process, whatever the model
BASE_MIB = 400
STRATEGIES = ["ddp", "fsdp"]


@pytest.fixture(scope="module")
def results() -> dict[str, object]:
    got = pgdoctor.verify.verify_many(
        [("pgdoctor.verify.examples:gpt_124m", s) for s in STRATEGIES],
        nproc=2,
        steps=1,
        timeout_s=1200,
        pg_timeout_s=1200,
    )
    return dict(zip(STRATEGIES, got))


@pytest.mark.slow
@pytest.mark.large
@pytest.mark.timeout(3000)  # the first test waits for the batch of both runs
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_gpt2_small_is_equivalent_within_three_times_its_state(
    strategy: str, results: dict[str, object]
) -> None:
    import torch

    assert GPT_SIZES["124m"] == (12, 768, 12, 50257)
    with torch.device("meta"):  # the same model's parameters, counted without initialising 124M values
        params = sum(p.numel() for p in gpt("124m")["model"].parameters())
    assert 124e6 < params < 125e6
    res = results[strategy]
    assert isinstance(res, pgdoctor.verify.VerifyResult), res
    assert res.equivalent, (res.to_json(), [f.message for f in res.findings])
    assert res.findings == [] and res.max_rel_diff < 1e-3
    state_mib = params * 8 / 2**20  # fp32 parameters and gradients (SGD)
    assert set(res.peak_rss_mib) == {"rank0", "rank1"}
    assert max(res.peak_rss_mib.values()) < 3 * state_mib + BASE_MIB, res.peak_rss_mib

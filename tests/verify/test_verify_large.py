"""`pgdoctor verify` of a GPT-2-small-sized model (124M parameters, 12 TransformerEncoderLayer
blocks, fp32) on 2 real gloo ranks, under DDP and under FSDP (fully_shard): equivalent, every
process within about 3x the model's training state. Marked `large` as well as `slow`: about 100 s alone on a
2-core host, minutes
beside other tests."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import pgdoctor
from pgdoctor.verify.examples import GPT_SIZES, gpt

# torch's own import and allocator in each process, whatever the model
BASE_MIB = 400


@pytest.mark.slow
@pytest.mark.large
@pytest.mark.timeout(1500)
@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_gpt2_small_is_equivalent_within_three_times_its_state(strategy: str) -> None:
    assert GPT_SIZES["124m"] == (12, 768, 12, 50257)
    params = sum(p.numel() for p in gpt("124m")["model"].parameters())
    assert 124e6 < params < 125e6
    res = pgdoctor.verify(
        "pgdoctor.verify.examples:gpt_124m",
        nproc=2,
        steps=2,
        strategy=strategy,
        timeout_s=1200,
        pg_timeout_s=1200,
    )
    assert res.equivalent, (res.to_json(), [f.message for f in res.findings])
    assert res.findings == [] and res.max_rel_diff < 1e-3
    state_mib = params * 8 / 2**20  # fp32 parameters and gradients (SGD)
    assert set(res.peak_rss_mib) == {"rank0", "rank1"}
    assert max(res.peak_rss_mib.values()) < 3 * state_mib + BASE_MIB, res.peak_rss_mib

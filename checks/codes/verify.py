"""Codes of `pgdoctor verify` (is the distributed run the same training as one process?) and
`pgdoctor bench scaling` (what each added rank buys). Emitted by pgdoctor.verify."""

from __future__ import annotations

from pgdoctor.checks.base import register_code

NOT_EQUIVALENT = register_code(
    "VER101",
    "verify-not-equivalent",
    "fail",
    "equivalence",
    "The distributed run does not train the same model as one process, for a cause not identified",
    "verify",
)
BATCHNORM_NOT_SYNCED = register_code(
    "VER102",
    "verify-batchnorm-not-synced",
    "fail",
    "equivalence",
    "BatchNorm normalises each rank's micro-batch on its own: SyncBatchNorm is missing",
    "verify",
)
LOSS_REDUCTION_SUM = register_code(
    "VER103",
    "verify-loss-reduction-sum",
    "fail",
    "equivalence",
    "The ranks' gradients are 1/world size of one process's: the loss sums over the batch, or is divided "
    "by the world size",
    "verify",
)
IDENTICAL_SAMPLES = register_code(
    "VER104",
    "verify-identical-samples-across-ranks",
    "fail",
    "data",
    "Ranks train on identical samples: the data is not sharded (no DistributedSampler)",
    "verify",
)
UNUSED_PARAMETERS = register_code(
    "VER105",
    "verify-unused-parameters",
    "fail",
    "equivalence",
    "Parameters get no gradient on some ranks (unused in that rank's forward)",
    "verify",
)
RANK_DEPENDENT_FORWARD = register_code(
    "VER106",
    "verify-rank-dependent-forward",
    "fail",
    "equivalence",
    "The forward computes something that depends on the rank",
    "verify",
)
UNEQUAL_MICRO_BATCHES = register_code(
    "VER107",
    "verify-unequal-micro-batches",
    "fail",
    "data",
    "Ranks get micro-batches of different sizes (samples, or targets the loss does not ignore) under a mean "
    "loss: samples are weighted unequally",
    "verify",
)
FROZEN_ON_SOME_RANKS = register_code(
    "VER108",
    "verify-params-frozen-on-some-ranks",
    "fail",
    "equivalence",
    "Parameters are frozen (requires_grad False) on some ranks only",
    "verify",
)
BUFFERS_DRIFT = register_code(
    "VER109",
    "verify-buffers-drift",
    "fail",
    "equivalence",
    "Module buffers drift apart across ranks",
    "verify",
)
NONDETERMINISTIC = register_code(
    "VER110",
    "verify-nondeterministic-model",
    "warn",
    "equivalence",
    "Randomness in the model (dropout, RNG) makes runs differ; equivalent once it is fixed",
    "verify",
)
PIPELINE_SPLIT_MISMATCH = register_code(
    "VER111",
    "verify-pipeline-split-mismatch",
    "fail",
    "equivalence",
    "The pipeline stages do not compute what the unsplit model computes",
    "verify",
)
TENSOR_PARALLEL_MISMATCH = register_code(
    "VER112",
    "verify-tensor-parallel-mismatch",
    "fail",
    "equivalence",
    "The tensor-parallel layers do not compute what the dense layers compute",
    "verify",
)
EMPTY_MICRO_BATCH = register_code(
    "VER113",
    "verify-empty-micro-batch",
    "fail",
    "data",
    "A rank gets an empty micro-batch: it trains on nothing at that step",
    "verify",
)
MODELS_DIFFER = register_code(
    "VER114",
    "verify-models-differ-across-ranks",
    "fail",
    "equivalence",
    "The ranks build different models: parameters missing, of other shapes, or (FSDP) initialised "
    "differently on some ranks",
    "verify",
)
LOSS_NOT_FINITE = register_code(
    "VER115",
    "verify-loss-not-finite",
    "fail",
    "equivalence",
    "The loss is NaN or infinite",
    "verify",
)
OPTIMIZER_DIFFERS = register_code(
    "VER117",
    "verify-optimizer-differs",
    "fail",
    "equivalence",
    "The optimizer factory gives the ranks other settings than the one process (a learning rate "
    "scaled by the world size)",
    "verify",
)
LOSS_OVER_MICRO_BATCH = register_code(
    "VER118",
    "verify-in-batch-loss-on-micro-batch",
    "fail",
    "equivalence",
    "The loss couples the samples of a batch (in-batch negatives) and each rank computes it over its own "
    "micro-batch only: no all_gather of the embeddings",
    "verify",
)
CLIP_LOCAL_SHARDS = register_code(
    "VER119",
    "verify-clip-norm-from-local-shards",
    "fail",
    "equivalence",
    "Gradient clipping scales each rank's gradients by another factor: the norm is computed from the "
    "rank's local shards, not the whole model's",
    "verify",
)
SCALING_SLOWER = register_code(
    "VER201",
    "scaling-step-slower-with-more-ranks",
    "warn",
    "scaling",
    "Adding ranks makes training slower: less throughput than the one-process baseline",
    "verify",
)
SCALING_EFFICIENCY_LOW = register_code(
    "VER202",
    "scaling-efficiency-low",
    "warn",
    "scaling",
    "Scaling efficiency is below the threshold: each added rank buys little",
    "verify",
)

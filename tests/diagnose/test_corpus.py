"""Real logs as a test: every case of the corpora under tests/fixtures/corpus/ (real_logs_v1.jsonl
and new/*.jsonl, each case verbatim from a public issue thread, with its URL) goes through the
diagnosis in-process, and the first warn or fail finding must have a category that the case's
label accepts, as the project's scorer judges it:

- label -> accepted finding categories (MAP below); "other_ambiguous" is a decoy: right with no
  warn/fail finding (or a process_crash: a plain user bug that killed the rank);
- a secondary label widens the accepted set only for the lenient labels;
- `should_not_classify_as` removes categories (any "nccl_*" removes the three NCCL ones), never the
  case's own class, as shared/corpus/score.py reads it.

The thresholds are the issue's bar: 98 % top-1 on v1, 95 % on the new corpus, every decoy right,
no exception. A miss list is printed on failure so that the family that regressed is visible.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

import pytest

from tests.helpers.diagnosed import CORPUS_GROUP, diagnosed
from tests.helpers.paths import FIXTURES

# The answers to these logs are kept per worker (tests/helpers/diagnosed.py): the gates test and the
# paste shapes read the same logs, and run on the worker that holds them.
pytestmark = pytest.mark.xdist_group(CORPUS_GROUP)

CORPUS = FIXTURES / "corpus"
V1 = CORPUS / "real_logs_v1.jsonl"
NEW = sorted((CORPUS / "new").glob("*.jsonl"))
# The earlier held-out set, handed over after it was scored (a copy of shared/corpus/real_logs_v2.jsonl).
V2 = CORPUS / "real_logs_v2.jsonl"
# Corpus v3 (tests/fixtures/corpus/v3/README.md): dev.jsonl and dev2.jsonl were read while rules were
# written; heldout.jsonl was not, and is scored by its own test with its own bar.
V3_DEV = [CORPUS / "v3" / "dev.jsonl", CORPUS / "v3" / "dev2.jsonl"]
V3_HELDOUT = CORPUS / "v3" / "heldout.jsonl"
# Corpus v4 (tests/fixtures/corpus/v4/README.md): a second held-out set, committed with its sha256
# before it was scored; only its own test below reads it.
V4_HELDOUT = CORPUS / "v4" / "heldout.jsonl"
# Corpus v5 (tests/fixtures/corpus/v5/README.md): a third held-out set, frozen the same way.
V5_HELDOUT = CORPUS / "v5" / "heldout.jsonl.gz"
# Corpora v6 and v7 (their READMEs): held-out sets collected beside the rule writers of the same
# session, frozen with their sha256 before any scoring, scored once at its end.
V6_HELDOUT = CORPUS / "v6" / "heldout.jsonl"
V7_HELDOUT = [CORPUS / "v7" / "heldout.jsonl", CORPUS / "v7" / "heldout2.jsonl"]
# Corpus v8 (its READMEs): three collections frozen beside the rule writers of 2026-12-05, each file
# with its own README and sha256 (GitHub threads twice, forum and blog pages once).
V8_HELDOUT = sorted((CORPUS / "v8").glob("heldout_*.jsonl"))
# Corpus v9 (its READMEs): two collections frozen beside the rule writers of the next session.
V9_HELDOUT = sorted((CORPUS / "v9").glob("heldout_*.jsonl"))
# Corpus v10 (its READMEs): two collections frozen beside the rule writers of the session after.
V10_HELDOUT = sorted((CORPUS / "v10").glob("heldout_*.jsonl"))
# Corpus v11 (its READMEs): collections frozen beside the rule writers of the session after v10's.
V11_HELDOUT = sorted((CORPUS / "v11").glob("heldout_*.jsonl"))
# Corpus v12 (its READMEs): six collections frozen beside the rule writers of the session after v11's.
V12_HELDOUT = sorted((CORPUS / "v12").glob("heldout_*.jsonl"))
# Corpus v13 (its READMEs): six collections frozen beside the rule writers of the session after v12's.
V13_HELDOUT = sorted((CORPUS / "v13").glob("heldout_*.jsonl"))
# Corpus v14 (v14/README.md): six collections split at random into a dev half, which rule writers read,
# and a held-out half, scored through the CLI only until it was released on 2026-12-06 (v15's took over).
V14_DEV = CORPUS / "v14" / "dev.jsonl"
V14_HELDOUT = CORPUS / "v14" / "heldout.jsonl"
# Corpus v15 (v15/README.md): seven collections split the same way, frozen 2026-12-06.
V15_DEV = CORPUS / "v15" / "dev.jsonl"
V15_HELDOUT = CORPUS / "v15" / "heldout.jsonl"
# Corpus v16 (v16/README.md): eight collections split the same way, frozen 2026-12-06.
V16_DEV = CORPUS / "v16" / "dev.jsonl"
V16_HELDOUT = CORPUS / "v16" / "heldout.jsonl"
# Corpus v17 (v17/README.md): nine collections split the same way, frozen 2026-12-06; its held-out half was
# released on 2026-12-06 while v18 was collected.
V17_DEV = CORPUS / "v17" / "dev.jsonl"
V17_HELDOUT = CORPUS / "v17" / "heldout.jsonl"
# Corpus v18 (v18/README.md): nine collections split the same way, frozen 2026-12-06; its held-out half was
# released on 2026-12-06 once v19 was frozen.
V18_DEV = CORPUS / "v18" / "dev.jsonl"
V18_HELDOUT = CORPUS / "v18" / "heldout.jsonl"
# Corpus v19 (v19/README.md): eight collections split the same way, frozen 2026-12-06; its held-out half was
# released on 2026-12-07 once v20 was frozen.
V19_DEV = CORPUS / "v19" / "dev.jsonl"
V19_HELDOUT = CORPUS / "v19" / "heldout.jsonl"
# Corpus v20 (v20/README.md): eight collections split the same way, frozen 2026-12-07; its held-out half was
# released on 2026-12-07 once v21 was frozen.
V20_DEV = CORPUS / "v20" / "dev.jsonl"
V20_HELDOUT = CORPUS / "v20" / "heldout.jsonl"
# Corpus v21 (v21/README.md): eight collections split the same way, frozen 2026-12-07; its held-out half was
# released on 2026-12-07 once v22 was frozen.
V21_DEV = CORPUS / "v21" / "dev.jsonl"
V21_HELDOUT = CORPUS / "v21" / "heldout.jsonl"
# Corpus v22 (v22/README.md): eight collections split the same way, frozen 2026-12-07; its held-out half was
# released on 2026-12-07 once v23 was frozen and it had been scored three times.
V22_DEV = CORPUS / "v22" / "dev.jsonl"
V22_HELDOUT = CORPUS / "v22" / "heldout.jsonl"
# Corpus v23 (v23/README.md): four collections split the same way, frozen 2026-12-07; its held-out half was
# released on 2026-12-08 once v24 was frozen and it had been scored three times.
V23_DEV = CORPUS / "v23" / "dev.jsonl"
V23_HELDOUT = CORPUS / "v23" / "heldout.jsonl"
# Corpus v24 (v24/README.md): two collections split the same way, frozen 2026-12-08; its held-out half is
# stored gzipped and never read by rule writers.
V24_DEV = CORPUS / "v24" / "dev.jsonl"
V24_HELDOUT = CORPUS / "v24" / "heldout.jsonl.gz"
# Held-out cases a rule writer saw anyway, left out of the held-out figures: the same thread was
# found by a rule writer of the same session while the collectors worked, and its log is in new/part3_*.
SEEN_BY_RULE_WRITERS = {
    "v7-process_killed-001": "its URL is p3k-process_killed-001 (new/part3_killed.jsonl)",
    "v6-rendezvous_init-001": "its URL is p3n-rendezvous_init-011 (new/part3_network.jsonl)",
    "v6-other_ambiguous-002": "half its lines are p3n-rendezvous_init-005's (new/part3_network.jsonl)",
    "v10x-nccl_timeout-001": "its URL is p6h-nccl_timeout-002's (new/part6_hccl.jsonl)",
    "v10x-nccl_timeout-003": "its URL is p6h-nccl_timeout-003's (new/part6_hccl.jsonl)",
    "v10x-nccl_timeout-004": "its URL is p6h-nccl_timeout-006's (new/part6_hccl.jsonl)",
    "v10x-nccl_timeout-005": "its URL is p6h-nccl_timeout-001's (new/part6_hccl.jsonl)",
    "v10x-rendezvous_init-009": "its URL is p6r-rendezvous_init-007's (new/part6_rdzv.jsonl)",
    "v10x-process_killed-002": "5 of its 7 long lines are p6f-nccl_system_error-002's (new/part6_fwk.jsonl)",
    # the two v10 collections found the same thread; the GitHub part's copy is the one scored
    "v10x-driver_env-008": "its URL is v10g-driver_env-005's (v10/heldout_gh.jsonl)",
    "v11g-rendezvous_init-004": "its URL is p7c-rendezvous_init-004's (new/part7_dsr.jsonl)",
    "v12x-collective_desync-002": "its URL and lines are p8s-collective_desync-001's (new/part8_dsy.jsonl)",
    "v13x-process_killed-001": "its URL and lines are p10x-process_killed-001's (new/part10_xst.jsonl)",
    "v14a-collective_desync-002": "its URL and lines are p12f-collective_desync-001's (new/part12_x4.jsonl)",
    "v16g-nccl_system_error-014": "its URL is deepseek-ai/DeepEP#307, in new/part16_s14r2.jsonl",
    # a rule writer's grep across tests/fixtures/corpus showed these held-out ids with their labels
    "v16h-driver_env-003": "its id and label were seen by a rule writer (a grep of its message)",
    "v16h-driver_env-012": "its id and label were seen by a rule writer (a grep of its message)",
    # printed with its label and the rules' answer (nccl_network, right by shared/corpus/score.py before and
    # after) when the harness's should_not_classify_as reading was aligned with score.py; its log was not read
    "v18F-nccl_system_error-009": "its id, label and answer were printed to a rule writer (not its log)",
}

MAP: dict[str, set[Optional[str]]] = {
    "cuda_oom": {"cuda_oom"},
    "nccl_timeout": {"collective_timeout"},
    "nccl_system_error": {"nccl_network"},
    "nccl_internal_or_invalid_usage": {"nccl_usage"},
    "collective_desync": {"collective_mismatch"},
    "rendezvous_init": {"rendezvous"},
    "gpu_hardware": {"gpu_hardware"},
    "driver_env": {"driver_env"},
    "process_killed": {"host_oom", "process_crash"},
    "other_ambiguous": {None, "process_crash"},
}
NOT = {
    "process_killed (host OOM)": "host_oom",
    "process_killed": "host_oom",
    "cuda_oom": "cuda_oom",
    "gpu_hardware": "gpu_hardware",
    "rendezvous_init": "rendezvous",
}
LENIENT = {"nccl_internal_or_invalid_usage", "other_ambiguous"}

# Label conflicts settled in favour of the reference corpora (shared/corpus v1 and v2, the series the
# project is judged with; the corpora were labelled by different people, and the same message carries
# different labels in them). Each decision names the cases of the project's own collections whose label
# it overrides here; the corpus files themselves stay verbatim.
# - NVLS "Cuda failure 1 'invalid argument'" at transport/nvls.cc (a driver call on a multicast object that
#   NCCL returns as ncclUnhandledCudaError): v2 labels both its cases nccl_internal_or_invalid_usage, NCCL's
#   own class, so RUN196 is nccl_usage; the project's collectors had labelled six driver_env. The driver's
#   answers that name the fabric or its state ("not supported", 401 "present state", Fabric Manager, IMEX)
#   stay driver_env (RUN292); no reference case says otherwise.
# - "Invalid config blocking attribute value -2147483648" (torch built against newer NCCL headers than the
#   libnccl it loaded; NCCL returns ncclInvalidArgument): v2 labels it usage (RUN197); three collected cases
#   said driver_env.
# - A bare "unhandled cuda error" (ncclUnhandledCudaError) with no WARN line naming the CUDA error stays NCCL
#   usage (RUN194, tier 1), the label of most cases in v1; when a line names the CUDA error (out of memory,
#   802, an old driver, a fabric refusal), that error decides the class instead.
# - A network plugin or fabric library that finds no usable provider at init (aws-ofi-nccl's "Couldn't find
#   any optimal provider", "Failed to initialize any NET plugin", oneCCL's and MPICH's fi_getinfo -61: RUN294)
#   is the network's, as the issue that set the classes words it ("OFI/EFA and IB plugin init errors: network,
#   not usage") and as v3-nccl_system_error-012 and v14f-nccl_system_error-005 label it; four collected cases
#   said driver_env.
# - TCPStore's "use_libuv was requested but PyTorch was build without libuv support" (a Windows wheel of
#   2.4+: the build lacks the store backend torchrun asks for) is the environment's (RUN551): three blind
#   collections (v12m-driver_env-001, v16h-driver_env-012, v17f-driver_env-002) label it driver_env; the
#   two cases of the rule writers' own part3 said rendezvous (until 2026-12-06 it was RUN224).
# Until 2026-12-06 the first two went the other way (driver_env, overriding v2's three labels), and RUN294
# was driver_env.
_USAGE = "nccl_internal_or_invalid_usage"
LABEL_DECISIONS: dict[str, str] = {
    **dict.fromkeys(
        (
            "v3-driver_env-016",
            "v3d2-driver_env-003",
            "v3d2-driver_env-004",
            "v3d2-driver_env-005",
            "v3d2-driver_env-007",
            "v11x-driver_env-005",
        ),
        _USAGE,
    ),
    **dict.fromkeys(("v3-driver_env-013", "v3-driver_env-014", "v14b-driver_env-004"), _USAGE),
    **dict.fromkeys(
        ("p6f-driver_env-001", "p6f-driver_env-002", "v3d2-driver_env-009", "v14f-driver_env-005"),
        "nccl_system_error",
    ),
    **dict.fromkeys(("p3n-rendezvous_init-012", "p3n-rendezvous_init-013"), "driver_env"),
}


def accepted(case: dict[str, Any]) -> set[Optional[str]]:
    if case["id"] in LABEL_DECISIONS:
        return set(MAP[LABEL_DECISIONS[case["id"]]])
    acc = set(MAP[case["category"]])
    if case["category"] in LENIENT:
        for s in case.get("secondary") or []:
            acc |= MAP.get(s, set())
    # As shared/corpus/score.py reads it: a label the case should not get removes that label's categories
    # (any "nccl_..." the three NCCL ones), but never the case's own class.
    own = set(MAP[case["category"]])
    facts = case.get("expected_facts") or {}
    for s in facts.get("should_not_classify_as", []) if isinstance(facts, dict) else []:
        if s in MAP:
            wrong = set(MAP[s])
        elif s.startswith("nccl_"):
            wrong = {"nccl_network", "nccl_usage", "collective_timeout"}
        else:
            wrong = {NOT[s]} if s in NOT else set()
        acc -= wrong - own
    return acc


def _frozen_bytes(path: Path) -> bytes:
    """A half still held out is stored gzipped (`heldout.jsonl.gz`, `gzip -n`) so that a text search
    across the corpus folder cannot show its ids, labels or logs to a rule writer; the sha256 it was
    frozen with is of the decompressed bytes, so gzipping it changes no recorded hash."""
    raw = path.read_bytes()
    return gzip.decompress(raw) if path.suffix == ".gz" else raw


def _cases(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in _frozen_bytes(path).decode().splitlines() if line.strip()]


def _score(paths: list[Path]) -> tuple[int, int, list[str], dict[str, list[int]]]:
    right, total, misses = 0, 0, []
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for path in paths:
        for case in _cases(path):
            if case["id"] in SEEN_BY_RULE_WRITERS:
                continue
            findings = diagnosed(case["id"], case["log"])  # an exception fails the test
            real = [f for f in findings if f.severity.value in ("warn", "fail")]
            first = real[0].category if real else None
            ok = first in accepted(case)
            right += ok
            total += 1
            per[case["category"]][0] += ok
            per[case["category"]][1] += 1
            if not ok:
                misses.append(
                    f"{case['id']}: got {first} ({real[0].code if real else '-'}), "
                    f"want {sorted(map(str, accepted(case)))}"
                )
    return right, total, misses, per


def test_v1_corpus_is_copied_verbatim_with_its_sources() -> None:
    cases = _cases(V1)
    assert len(cases) == 147 and len({c["id"] for c in cases}) == 147
    assert all(c["url"].startswith("https://") and c["log"] for c in cases)


def test_real_logs_v1_top1_at_least_98_percent() -> None:
    right, total, misses, _ = _score([V1])
    assert right >= 0.98 * total, f"v1 top-1 {right}/{total}; misses:\n" + "\n".join(misses)


@pytest.mark.skipif(not NEW, reason="no new corpus files")
def test_new_corpus_top1_at_least_95_percent() -> None:
    right, total, misses, _ = _score(NEW)
    assert right >= 0.95 * total, f"new top-1 {right}/{total}; misses:\n" + "\n".join(misses)


def test_real_logs_v2_top1() -> None:
    right, total, misses, _ = _score([V2])
    # 106/106 by the labels as filed (no decision overrides a v2 label since 2026-12-06)
    assert total == 106 and right >= 105, f"v2 top-1 {right}/{total}; misses:\n" + "\n".join(misses)


def test_corpus_v3_dev_top1() -> None:
    right, total, misses, _ = _score(V3_DEV)
    assert right >= BARS["v3_dev"] * total, f"v3 dev top-1 {right}/{total}; misses:\n" + "\n".join(misses)


def test_corpus_v3_heldout_top1() -> None:
    """Scored once, at the end of the session that wrote the rules, never read while writing them:
    105/132 (80 %). The bar guards that figure; the next rules are written from other logs."""
    right, total, _, _ = _score([V3_HELDOUT])
    assert total == 132 and right >= BARS["v3_heldout"] * total, f"v3 held-out top-1 {right}/{total}"


def test_corpus_v4_heldout_top1() -> None:
    """Scored once, after the file was committed with its hash and before any rule saw it: 46/52
    (88.5 %). The bar is that figure rounded down to 0.05; the misses are not worked on from here."""
    right, total, _, _ = _score([V4_HELDOUT])
    assert total == 52 and right >= BARS["v4_heldout"] * total, f"v4 held-out top-1 {right}/{total}"


def test_corpus_v5_heldout_top1() -> None:
    """Scored once, after the file was committed with its hash and before any rule saw it: 70/80
    (87.5 %). The bar is that figure rounded down to 0.05; the misses are not worked on from here."""
    right, total, _, _ = _score([V5_HELDOUT])
    assert total == 80 and right >= BARS["v5_heldout"] * total, f"v5 held-out top-1 {right}/{total}"


def test_corpus_v6_heldout_top1() -> None:
    """Scored once, at the end of the session whose rule writers never read it: 18/33 (54.5 %;
    2 of its 35 cases left out, SEEN_BY_RULE_WRITERS). The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V6_HELDOUT])
    assert total == 33 and right >= BARS["v6_heldout"] * total, f"v6 held-out top-1 {right}/{total}"


def test_corpus_v7_heldout_top1() -> None:
    """Scored once, the same way: 79/103 (76.7 %; heldout.jsonl 63/83, heldout2.jsonl 16/20; 1 of
    its 104 cases left out, SEEN_BY_RULE_WRITERS). The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score(V7_HELDOUT)
    assert total == 103 and right >= BARS["v7_heldout"] * total, f"v7 held-out top-1 {right}/{total}"


def test_corpus_v8_heldout_top1() -> None:
    # Scored once on 9c3dfbf: 135/174; released as dev data right after (v8/README.md).
    right, total, _, _ = _score(V8_HELDOUT)
    assert total == 174 and right >= BARS["v8_heldout"] * total, f"v8 held-out top-1 {right}/{total}"


def test_corpus_v9_heldout_top1() -> None:
    # Scored once on bba2160: 80/108; released as dev data right after (v9/README.md).
    right, total, _, _ = _score(V9_HELDOUT)
    assert total == 108 and right >= BARS["v9_heldout"] * total, f"v9 held-out top-1 {right}/{total}"


def test_corpus_v10_heldout_top1() -> None:
    # Scored once on fb79db5 with shared/corpus/score.py: 89/112 (7 of 119 left out above);
    # released as dev data right after (v10/README.md).
    right, total, _, _ = _score(V10_HELDOUT)
    assert total == 112 and right >= BARS["v10_heldout"] * total, f"v10 held-out top-1 {right}/{total}"


def test_corpus_v11_heldout_top1() -> None:
    # Scored once on 555e215 with shared/corpus/score.py: 82/101 (1 of 102 left out above);
    # released as dev data right after (v11/README.md).
    right, total, _, _ = _score(V11_HELDOUT)
    assert total == 101 and right >= BARS["v11_heldout"] * total, f"v11 held-out top-1 {right}/{total}"


def test_corpus_v12_heldout_top1() -> None:
    # Scored once on 052f945 with shared/corpus/score.py: 226/297 (1 of 298 left out above);
    # released as dev data right after (v12/README.md).
    right, total, _, _ = _score(V12_HELDOUT)
    assert total == 297 and right >= BARS["v12_heldout"] * total, f"v12 held-out top-1 {right}/{total}"


def test_corpus_v13_heldout_top1() -> None:
    # Scored once on 55d0360 with shared/corpus/score.py: 241/337 (1 of 338 left out above);
    # released as dev data right after (v13/README.md).
    right, total, _, _ = _score(V13_HELDOUT)
    assert total == 337 and right >= BARS["v13_heldout"] * total, f"v13 held-out top-1 {right}/{total}"


def test_corpus_v14_dev_top1() -> None:
    """The dev half of v14: 116/166 (69.9 %) through the CLI before this session's rule writers read it,
    145/166 (87.3 %) after. The bar is the second figure rounded down to 0.05."""
    right, total, _, _ = _score([V14_DEV])
    assert total == 166 and right >= BARS["v14_dev"] * total, f"v14 dev top-1 {right}/{total}"


def test_corpus_v14_heldout_top1() -> None:
    """The held-out half of v14 (v14/README.md): through the CLI 123/167 (73.7 %) before the rule work on
    the dev half, 126/167 (75.4 %) at its last blind scoring (1 of 168 left out, SEEN_BY_RULE_WRITERS).
    Released as dev material on 2026-12-06 and worked on: 151/167 (90.4 %) after. The bar is that figure
    rounded down to 0.05."""
    right, total, _, _ = _score([V14_HELDOUT])
    assert total == 167 and right >= BARS["v14_heldout"] * total, f"v14 held-out top-1 {right}/{total}"


def test_corpus_v15_dev_top1() -> None:
    """The dev half of v15: 118/149 (79.2 %) through the CLI before rule writers read it (8e3e028), 143/149
    (96.0 %) after. The bar is the second figure rounded down to 0.05."""
    right, total, _, _ = _score([V15_DEV])
    assert total == 149 and right >= BARS["v15_dev"] * total, f"v15 dev top-1 {right}/{total}"


def test_corpus_v15_heldout_top1() -> None:
    """The held-out half of v15 (v15/README.md): through the CLI 125/153 (81.7 %) before any rule work on
    the dev half (8e3e028), and at each of its four blind scorings after. Released as dev material on
    2026-12-06 while v16 was collected, and worked on: 142/153 (92.8 %) after. The bar is that figure
    rounded down to 0.05."""
    right, total, _, _ = _score([V15_HELDOUT])
    assert total == 153 and right >= BARS["v15_heldout"] * total, f"v15 held-out top-1 {right}/{total}"


def test_corpus_v16_dev_top1() -> None:
    """The dev half of v16: 112/173 (64.7 %) through the CLI before rule writers read it (cba24ba), 150/173
    (86.7 %) after. The bar is the second figure rounded down to 0.05."""
    right, total, _, _ = _score([V16_DEV])
    assert total == 173 and right >= BARS["v16_dev"] * total, f"v16 dev top-1 {right}/{total}"


def test_corpus_v16_heldout_top1() -> None:
    """The held-out half of v16 (v16/README.md): through the CLI 119/177 (67.2 %) before any
    rule work on v16 (cba24ba; 1 of 178 left out, SEEN_BY_RULE_WRITERS; two more left out since: a rule
    writer's grep showed their ids and labels: 119/175 on those). At the end of that session, after the
    rule work on its dev half, 123/175 (70.3 %). Released as dev material on 2026-12-06 while v17 was
    collected (by collectors blind to the rules), and worked on: 151/175 (86.3 %) after. The bar is that
    figure rounded down to 0.05."""
    right, total, _, _ = _score([V16_HELDOUT])
    assert total == 175 and right >= BARS["v16_heldout"] * total, f"v16 held-out top-1 {right}/{total}"


def test_corpus_v17_dev_top1() -> None:
    """The dev half of v17: 121/158 (76.6 %) through the CLI at its freeze (3261a1f), before the rule work
    of that session (on v16's released held-out half) was merged; not read by that session's rule writers.
    At that session's end, after the merge: 120/158 (75.9 %); worked on by the next session: 149/158 (94.3 %).
    The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V17_DEV])
    assert total == 158 and right >= BARS["v17_dev"] * total, f"v17 dev top-1 {right}/{total}"


def test_corpus_v17_heldout_top1() -> None:
    """The held-out half of v17 (v17/README.md): through the CLI 122/163 (74.8 %) at its freeze, before that
    session's rule work was merged; 123/163 (75.5 %) at that session's end; 125/163 (76.7 %) at the next
    session's end. Released as dev material on 2026-12-06 while v18 was collected, and worked on: 152/163
    (93.3 %) after. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V17_HELDOUT])
    assert total == 163 and right >= BARS["v17_heldout"] * total, f"v17 held-out top-1 {right}/{total}"


def test_corpus_v18_dev_top1() -> None:
    """The dev half of v18: 91/153 (59.5 %) through the CLI at its freeze (9704cbd), before rule writers read
    it; 114/153 (74.5 %) after that session's rule work on it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V18_DEV])
    assert total == 153 and right >= BARS["v18_dev"] * total, f"v18 dev top-1 {right}/{total}"


def test_corpus_v18_heldout_top1() -> None:
    """The held-out half of v18 (v18/README.md): through the CLI 89/158 (56.3 %) at its freeze, with the
    rules of the session's start (fec9faf), again after that session's rule work on v17's released held-out
    half was merged (aef66f4), and at that session's end (its rule work on v18's dev half merged: +23 dev
    cases): 89/158 each time. Released as dev material on 2026-12-06 once v19 was frozen, and worked on:
    116/158 (73.4 %) through the CLI after. One case is left out here (SEEN_BY_RULE_WRITERS, from before the
    release), so the in-process figure is of 157. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V18_HELDOUT])
    assert total == 157 and right >= BARS["v18_heldout"] * total, f"v18 held-out top-1 {right}/{total}"


def test_corpus_v19_dev_top1() -> None:
    """The dev half of v19: 87/167 (52.1 %) through the CLI at its freeze (40f399f), before rule writers read
    it; 112/167 (67.1 %) after that session's rule work on it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V19_DEV])
    assert total == 167 and right >= BARS["v19_dev"] * total, f"v19 dev top-1 {right}/{total}"


def test_corpus_v19_heldout_top1() -> None:
    """The held-out half of v19 (v19/README.md): through the CLI 98/172 (57.0 %) at its freeze,
    with the rules of the session's start (ca47cf8); 99/172 (57.6 %) at that session's end, after its rule
    work on v18's released held-out half (+27) and v19's dev half (+25); 99/172 again at the end of the next
    session. Released as dev material on 2026-12-07 once v20 was frozen, and worked on: 122/172 (70.9 %)
    through the CLI after. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V19_HELDOUT])
    assert total == 172 and right >= BARS["v19_heldout"] * total, f"v19 held-out top-1 {right}/{total}"


def test_corpus_v20_dev_top1() -> None:
    """The dev half of v20: 104/172 (60.5 %) through the CLI at its freeze (841ed8c), before rule writers read
    it; 125/172 (72.7 %) after that session's rule work on it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V20_DEV])
    assert total == 172 and right >= BARS["v20_dev"] * total, f"v20 dev top-1 {right}/{total}"


def test_corpus_v20_heldout_top1() -> None:
    """The held-out half of v20 (v20/README.md): through the CLI 95/177 (53.7 %) at its freeze, with the
    rules of the session's start (9905677); 97/177 (54.8 %) at that session's end, after its rule work on
    v19's released held-out half (+23) and v20's dev half (+21); 97/177 again at the end of the next session.
    Released as dev material on 2026-12-07 once v21 was frozen, and worked on: 120/177 (67.8 %) through the
    CLI after. The bar: that figure rounded down to 0.05."""
    right, total, _, _ = _score([V20_HELDOUT])
    assert total == 177 and right >= BARS["v20_heldout"] * total, f"v20 held-out top-1 {right}/{total}"


def test_corpus_v21_dev_top1() -> None:
    """The dev half of v21: 102/170 (60.0 %) through the CLI at its freeze (49b5e4c), before rule writers read
    it; 121/170 (71.2 %) after that session's rule work on it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V21_DEV])
    assert total == 170 and right >= BARS["v21_dev"] * total, f"v21 dev top-1 {right}/{total}"


def test_corpus_v21_heldout_top1() -> None:
    """The held-out half of v21 (v21/README.md): through the CLI 99/174 (56.9 %) at its freeze,
    with the rules of the session's start (49b5e4c); 103/174 (59.2 %) at that session's end, after its rule
    work on v20's released held-out half (+23) and v21's dev half (+19). Released as dev material on
    2026-12-07 once v22 was frozen, and worked on: 128/174 (73.6 %) through the CLI at that session's end."""
    right, total, _, _ = _score([V21_HELDOUT])
    assert total == 174 and right >= BARS["v21_heldout"] * total, f"v21 held-out top-1 {right}/{total}"


def test_corpus_v22_dev_top1() -> None:
    """The dev half of v22: 90/158 (57.0 %) through the CLI at its freeze (8615cd7), before rule writers read
    it; 119/158 (75.3 %) after that session's rule work on it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V22_DEV])
    assert total == 158 and right >= BARS["v22_dev"] * total, f"v22 dev top-1 {right}/{total}"


def test_corpus_v22_heldout_top1() -> None:
    """The held-out half of v22 (v22/README.md): through the CLI 88/160 (55.0 %) at its freeze, with the rules
    of the session's start (8615cd7), 88/160 at that session's end, 89/160 (55.6 %) at the next session's end
    (its third scoring), never read by rule writers until then. Released as dev material on 2026-12-07."""
    right, total, _, _ = _score([V22_HELDOUT])
    assert total == 160 and right >= BARS["v22_heldout"] * total, f"v22 held-out top-1 {right}/{total}"


def test_corpus_v23_dev_top1() -> None:
    """The dev half of v23: 29/72 (40.3 %) through the CLI at its freeze (77b201b), before rule writers read
    it; 50/72 (69.4 %) after that session's rule work on it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V23_DEV])
    assert total == 72 and right >= BARS["v23_dev"] * total, f"v23 dev top-1 {right}/{total}"


def test_corpus_v23_heldout_top1() -> None:
    """The held-out half of v23 (v23/README.md): through the CLI 28/75 (37.3 %) at its freeze, with the rules
    of the session's start (77b201b); 31/75 (41.3 %) at that session's end and again at the next session's
    end (e71ce47, its third scoring), never read by rule writers until then. Released as dev material on
    2026-12-08."""
    right, total, _, _ = _score([V23_HELDOUT])
    assert total == 75 and right >= BARS["v23_heldout"] * total, f"v23 held-out top-1 {right}/{total}"


def test_corpus_v24_dev_top1() -> None:
    """The dev half of v24: 10/19 (52.6 %) through the CLI at the end of the session that froze it (e71ce47),
    before any rule writer read it. The bar is that figure rounded down to 0.05."""
    right, total, _, _ = _score([V24_DEV])
    assert total == 19 and right >= BARS["v24_dev"] * total, f"v24 dev top-1 {right}/{total}"


def test_corpus_v24_heldout_top1() -> None:
    """The held-out half of v24, never read (v24/README.md): through the CLI 10/19 (52.6 %) at its first
    scoring (e71ce47). Its misses are not read."""
    right, total, _, _ = _score([V24_HELDOUT])
    assert total == 19 and right >= BARS["v24_heldout"] * total, f"v24 held-out top-1 {right}/{total}"


@pytest.mark.parametrize(
    "heldout",
    [
        V4_HELDOUT,
        V5_HELDOUT,
        V6_HELDOUT,
        *V7_HELDOUT,
        *V8_HELDOUT,
        *V9_HELDOUT,
        *V10_HELDOUT,
        *V11_HELDOUT,
        *V12_HELDOUT,
        *V13_HELDOUT,
        V14_DEV,
        V14_HELDOUT,
        V15_DEV,
        V15_HELDOUT,
        V16_DEV,
        V16_HELDOUT,
        V17_DEV,
        V17_HELDOUT,
        V18_DEV,
        V18_HELDOUT,
        V19_DEV,
        V19_HELDOUT,
        V20_DEV,
        V20_HELDOUT,
        V21_DEV,
        V21_HELDOUT,
        V22_DEV,
        V22_HELDOUT,
        V23_DEV,
        V23_HELDOUT,
        V24_DEV,
        V24_HELDOUT,
    ],
    ids=[
        "v4",
        "v5",
        "v6",
        "v7",
        "v7-2",
        *(f"v8-{p.stem}" for p in V8_HELDOUT),
        *(f"v9-{p.stem}" for p in V9_HELDOUT),
        *(f"v10-{p.stem}" for p in V10_HELDOUT),
        *(f"v11-{p.stem}" for p in V11_HELDOUT),
        *(f"v12-{p.stem}" for p in V12_HELDOUT),
        *(f"v13-{p.stem}" for p in V13_HELDOUT),
        "v14-dev",
        "v14-heldout",
        "v15-dev",
        "v15-heldout",
        "v16-dev",
        "v16-heldout",
        "v17-dev",
        "v17-heldout",
        "v18-dev",
        "v18-heldout",
        "v19-dev",
        "v19-heldout",
        "v20-dev",
        "v20-heldout",
        "v21-dev",
        "v21-heldout",
        "v22-dev",
        "v22-heldout",
        "v23-dev",
        "v23-heldout",
        "v24-dev",
        "v24-heldout",
    ],
)
def test_corpus_heldout_is_the_frozen_file(heldout: Path) -> None:
    # The README names the sha256 the set was frozen with; an edited case would make the figure
    # above a measure of something else. A file frozen on its own has its own README
    # (heldout_gh.jsonl: README_gh.md), else the set's README.md holds every file's sha256.
    stem = heldout.name.split(".")[0]
    own = heldout.parent / ("README" + stem.removeprefix("heldout") + ".md")
    readme = " ".join((own if own.exists() else heldout.parent / "README.md").read_text().split())
    digest = hashlib.sha256(_frozen_bytes(heldout)).hexdigest()
    assert f"sha256 `{digest}`" in readme, f"{heldout} sha256 {digest} is not the one in README.md"


# The last measured figures, as regression bars (the bars are 98 % on v1/v2, 98 % on a dev
# half and 95 % on a held-out half).
BARS = {
    "v3_dev": 0.95,
    "v3_heldout": 0.79,
    "v4_heldout": 0.85,
    "v5_heldout": 0.85,
    "v6_heldout": 0.50,
    "v7_heldout": 0.75,
    "v8_heldout": 0.75,
    "v9_heldout": 0.70,
    "v10_heldout": 0.75,
    "v11_heldout": 0.80,
    "v12_heldout": 0.75,
    "v13_heldout": 0.70,
    "v14_dev": 0.85,
    "v14_heldout": 0.90,
    "v15_dev": 0.95,
    "v15_heldout": 0.90,
    "v16_dev": 0.85,
    "v16_heldout": 0.85,
    "v17_dev": 0.90,
    "v17_heldout": 0.90,
    "v18_dev": 0.70,
    "v18_heldout": 0.70,
    "v19_dev": 0.65,
    "v19_heldout": 0.70,
    "v20_dev": 0.70,
    "v20_heldout": 0.65,
    "v21_dev": 0.70,
    "v21_heldout": 0.70,
    "v22_dev": 0.75,
    "v22_heldout": 0.55,
    "v23_dev": 0.70,
    "v23_heldout": 0.40,
    "v24_dev": 0.50,
    "v24_heldout": 0.50,
}  # v3 dev + dev2: 231/241


def test_every_decoy_gets_no_wrong_failure() -> None:
    wrong = []
    for path in [V1, *NEW, V2, *V3_DEV]:
        for case in _cases(path):
            if case["category"] != "other_ambiguous":
                continue
            real = [f for f in diagnosed(case["id"], case["log"]) if f.severity.value in ("warn", "fail")]
            if real and real[0].category not in accepted(case):
                wrong.append(f"{case['id']}: {real[0].code} {real[0].message[:100]}")
    assert not wrong, "decoys diagnosed as failures:\n" + "\n".join(wrong)


def _fact_matches(f: Any, key: str, want: Any) -> bool:
    facts = f.facts
    if key == "rank":
        return want in (f.scope.rank, facts.get("rank")) or want in (facts.get("ranks") or [])
    if key in ("seq", "seq_num"):
        return (
            want in (facts.get("seq"), facts.get("last_enqueued_seq"))
            or want in (facts.get("seq_by_rank") or {}).values()
        )
    if key == "op_type":
        return str(facts.get("op", "")).lstrip("_").upper() == str(want).lstrip("_").upper()
    if key == "pid":
        return want in (facts.get("pid"), facts.get("worker_pid"), facts.get("suspect_pid"))
    return facts.get(key) == want


# Facts the cases' expected_facts name with a plain value, and the finding's key for each.
FACT_KEYS = ("rank", "seq", "seq_num", "op_type", "exitcode", "timeout_ms", "xid", "pid", "host")


def test_root_cause_carries_the_facts_the_log_shows() -> None:
    got: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    wrong = []
    for path in [V1, *NEW]:
        for case in _cases(path):
            facts = case.get("expected_facts") or {}
            real = [f for f in diagnosed(case["id"], case["log"]) if f.severity.value in ("warn", "fail")]
            if not isinstance(facts, dict) or not real:
                continue
            for key in FACT_KEYS:
                want = facts.get(key)
                if (
                    isinstance(want, bool)
                    or not isinstance(want, (int, str))
                    or (key == "host" and " " in str(want))
                ):
                    continue
                ok = _fact_matches(real[0], key, want)
                got[key][0] += ok
                got[key][1] += 1
                if not ok:
                    wrong.append(f"{case['id']}: {key}={want!r}")
    numbers = sum(got[k][0] for k in ("seq", "seq_num", "exitcode", "timeout_ms", "xid"))
    n_numbers = sum(got[k][1] for k in ("seq", "seq_num", "exitcode", "timeout_ms", "xid"))
    who = sum(got[k][0] for k in ("rank", "pid", "host", "op_type"))
    n_who = sum(got[k][1] for k in ("rank", "pid", "host", "op_type"))
    assert n_numbers >= 50 and numbers >= 0.95 * n_numbers, f"{numbers}/{n_numbers}: " + ", ".join(wrong)
    assert n_who >= 80 and who >= 0.8 * n_who, f"{who}/{n_who}: " + ", ".join(wrong)

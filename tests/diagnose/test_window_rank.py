"""A root line without a rank prefix takes the rank of the lines around it when they all name one rank
(a traceback printed under "[rank3]:" whose last line lost its prefix), and no rank when they name two."""

from __future__ import annotations

from pgdoctor.diagnose.api import diagnose_sources

OOM = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 388.00 MiB. GPU 0 has a total capacity of "
    "9.68 GiB of which 95.75 MiB is free."
)


def _root(text: str):  # type: ignore[no-untyped-def]
    return next(f for f in diagnose_sources([("log", text)]) if f.severity.value in ("warn", "fail"))


def test_a_root_line_without_prefix_takes_the_one_rank_around_it() -> None:
    log = (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank3]:   File "train.py", line 67, in <module>\n'
        "[rank3]:     trainer.train()\n" + OOM + "\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom"
    assert root.facts["rank"] == 3 and root.facts["rank_from"] == "the rank prefixes around it"


def test_two_ranks_around_it_name_none() -> None:
    log = (
        "[rank3]: Traceback (most recent call last):\n"
        '[rank1]:   File "train.py", line 67, in <module>\n'
        "[rank3]:     trainer.train()\n" + OOM + "\n"
    )
    root = _root(log)
    assert root.category == "cuda_oom" and "rank" not in root.facts


def test_one_prefixed_line_is_not_enough() -> None:
    root = _root("[rank3]: step 10 loss 0.1\n" + OOM + "\n")
    assert root.category == "cuda_oom" and "rank" not in root.facts


def test_the_line_s_own_prefix_wins() -> None:
    log = "[rank3]: Traceback (most recent call last):\n[rank3]:     trainer.train()\n[rank5]: " + OOM + "\n"
    root = _root(log)
    assert root.facts["rank"] == 5 and "rank_from" not in root.facts

"""The docs' command extractor and parser (tools/doccommands.py) on samples and on the real
docs: it reads shell as the shell would, reports what it cannot read, and the CLI's parsers
reject what the CLI does not have."""

from __future__ import annotations

import click
import pytest

from tools.doccommands import BY_LINE, COMMANDS, Rejected, extract, first_missing_line, parse


def test_the_extractor_finds_the_documented_commands() -> None:
    texts = {(c.file, c.text) for c in COMMANDS}
    assert (
        "docs/plan.md",
        "pgdoctor plan --params 7B --gpus-per-node 8 --nodes 1 --gpu-memory 80GiB "
        "--precision bf16-mixed --optimizer adamw --seq-len 4096 --micro-batch 1 --interconnect nvlink4",
    ) in texts
    assert ("README.md", "pgdoctor check") in texts  # after `python3 -m pip install . &&`
    assert ("README.md", "pgdoctor check --json") in texts
    (job,) = [c for c in COMMANDS if c.file == "README.md" and c.text == "pgdoctor check --json"]
    assert job.stdout_to == "preflight.json"
    (piped,) = [c for c in COMMANDS if c.stdin_from]
    assert piped.stdin_from == "kubectl logs trainer-0" and piped.args == ("diagnose", "-")
    chained = BY_LINE[("docs/gpu.md", 11)]
    assert [c.text for c in chained] == ["pgdoctor collect -o node.json", "pgdoctor check --from node.json"]
    assert chained[1].op == "&&"
    (torchrun,) = [c for c in COMMANDS if c.file == "docs/net.md" and c.wrapper[:1] == ("torchrun",)]
    assert torchrun.args == ("check", "--only", "net", "--json") and "--master-port=29500" in torchrun.wrapper
    (prom,) = [
        c
        for c in COMMANDS
        if c.file == "docs/output-formats.md" and "prometheus" in c.args and "quick" in c.args
    ]
    assert prom.args[-1] == "/var/lib/node_exporter/textfile/pgdoctor.prom.12345"
    assert any(c.entry == "pgdoctor.trace" for c in COMMANDS)
    # every doc file with a fenced pgdoctor line is read, and nothing else is mistaken for one
    assert {c.file for c in COMMANDS} >= {
        "README.md",
        "docs/collectives.md",
        "docs/diagnose.md",
        "docs/gpu.md",
        "docs/lab.md",
        "docs/net.md",
        "docs/output-formats.md",
        "docs/plan.md",
    }
    assert not any(c.file == "docs/architecture.md" for c in COMMANDS)
    assert len(COMMANDS) >= 40


SAMPLE = """\
Intro text with `pgdoctor list` inline, which is prose.

```
pgdoctor plan --params 7B \\
    --gpu-memory 80GiB   # sizes#with hashes stay
dir=/var/tmp/out
MASTER_PORT=1 srun -N 2 pgdoctor check --only net -o "$dir/r.$$" 2>&1 | tee log
kubectl logs x | pgdoctor diagnose - 2> err.txt > found.json || echo none
python3 -m pgdoctor.trace /tmp/job -o /tmp/job/t.json; python -m pytest -q
pgdoctor plan --params 7B --gpu-memory 80GiB --top 3 > top.txt
```

```python
pgdoctor.range("x")
```

```console
$ pgdoctor list --area run
RUN101 fail cuda_oom ...
$ pgdoctor explain RUN101
```
"""


def test_the_extractor_reads_shell_as_the_shell_would() -> None:
    ex = extract(SAMPLE, "sample.md")
    assert ex.problems == []
    plan, check, diag, trace, top, listing, explain = ex.commands
    assert (plan.line, plan.args) == (4, ("plan", "--params", "7B", "--gpu-memory", "80GiB"))
    assert check.wrapper == ("srun", "-N", "2") and check.env == (("MASTER_PORT", "1"),)
    assert check.args == ("check", "--only", "net", "-o", "/var/tmp/out/r.12345") and check.stdout_to is None
    assert (diag.args, diag.stdin_from, diag.stdout_to) == (("diagnose", "-"), "kubectl logs x", "found.json")
    assert (trace.entry, trace.args) == ("pgdoctor.trace", ("/tmp/job", "-o", "/tmp/job/t.json"))
    assert top.args[-2:] == ("--top", "3") and top.stdout_to == "top.txt"  # `3 >` is an argument, `2>` is not
    assert listing.output == ("RUN101 fail cuda_oom ...",) and (listing.line, listing.output_line) == (18, 19)
    assert explain.args == ("explain", "RUN101") and explain.output == ()


def test_the_extractor_reports_what_it_cannot_read() -> None:
    doc = (
        "```\npgdoctor check --only gpu\npgdoctor check --only net\n```\n\n```\n[ok] GPU\n```\n\n"
        "```\npgdoctor check -o $OUT/r.json\nls | xargs pgdoctor diagnose\n```\n"
    )
    problems = extract(doc, "bad.md").problems
    assert len(problems) == 3, problems
    assert "after 2 command lines" in problems[0]
    assert "$OUT" in problems[1] and "xargs" in problems[2]


def test_the_cli_rejects_what_it_does_not_have() -> None:
    with pytest.raises(click.NoSuchOption):
        parse("pgdoctor", ["check", "--no-such-option"])
    with pytest.raises(click.BadParameter):
        parse("pgdoctor", ["check", "--level", "fastest"])
    with pytest.raises(click.UsageError, match="No such command"):
        parse("pgdoctor", ["no-such-command"])
    with pytest.raises(click.NoSuchOption):
        parse("pgdoctor", ["bench", "collectives", "--nprocs", "2"])
    with pytest.raises(click.ClickException, match="unknown area or code"):
        parse("pgdoctor", ["check", "--only", "gpus"])
    with pytest.raises(Rejected):
        parse("pgdoctor.trace", ["/tmp/job", "--no-such-option"])
    with pytest.raises(AssertionError, match="not an entry point"):
        parse("pgdoctor.nosuch", [])
    # a doc line goes through the same path as the real docs
    (bad,) = extract("```\npgdoctor plan --params 7B --gpu-memory 80GiB --zero 4\n```\n", "bad.md").commands
    with pytest.raises(click.BadParameter):
        parse(bad.entry, bad.args)
    assert parse("pgdoctor", ["plan", "--params", "7B", "--gpu-memory", "80GiB", "--zero", "3"])[0] == (
        "plan",
    )


def test_the_output_comparison_can_fail() -> None:
    real = (
        "Layouts that fit\n*    8   1   1     1  57.2  22.8\n... and 11 more that fit (--top N)\n\n1 fail.\n"
    )
    assert (
        first_missing_line(
            ["Layouts that fit", "* 8 1 1 1 57.2 22.8", "... and 11 more that fit ...", "1 fail."], real
        )
        is None
    )
    assert first_missing_line(["* 8 1 1 1 57.2 22.9"], real) == "* 8 1 1 1 57.2 22.9"
    assert first_missing_line(["fail."], real) == "fail."  # a line matches whole, not a suffix of one
    assert first_missing_line(["1 fail.", "Layouts that fit"], real) == "Layouts that fit"  # order counts

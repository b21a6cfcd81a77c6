"""PlanOptions is the one typed record of `pgdoctor plan`'s choices: every field says what it
means, every flag of the command lands in it, and the library gives what the command prints."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json

from click.testing import CliRunner

from pgdoctor.cli.plan import plan_cmd
from pgdoctor.plan import options as options_module
from pgdoctor.plan.options import ModelSource, PlanError, PlanOptions
from pgdoctor.plan.run import largest, run_plan

# Flags about the output, not the plan.
OUTPUT_FLAGS = {"top", "as_json", "fail_on", "exit_zero"}
# Flags whose field has another name or lives in ModelSource, or is read from a file first.
RENAMED = {
    "params": "model",
    "model_path": "model",
    "layers": "model",
    "hidden": "model",
    "heads": "model",
    "vocab": "model",
    "kv_heads": "model",
    "no_flash_attention": "flash_attention",
    "no_sequence_parallel": "sequence_parallel",
    "from_path": "measured_path",
}


def _documented_fields(cls: type) -> set[str]:
    tree = ast.parse(inspect.getsource(options_module))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__).body
    out = set()
    for node, after in zip(body, body[1:]):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
        ):
            out.add(node.target.id)
    return out


def test_every_field_has_a_docstring() -> None:
    for cls in (PlanOptions, ModelSource):
        fields = {f.name for f in dataclasses.fields(cls)}
        assert fields - _documented_fields(cls) == set(), cls


def test_every_flag_lands_in_a_field() -> None:
    fields = {f.name for f in dataclasses.fields(PlanOptions)}
    for param in plan_cmd.params:
        name = param.name or ""
        if name in OUTPUT_FLAGS:
            continue
        assert RENAMED.get(name, name) in fields, f"--{name} has no PlanOptions field"


def test_the_library_gives_what_the_command_prints() -> None:
    argv = ["--params", "7B", "--gpu-memory", "80GiB", "--seq-len", "4096", "--top", "2", "--json"]
    printed = json.loads(CliRunner().invoke(plan_cmd, argv).output)["plan"]
    result = run_plan(PlanOptions(model=ModelSource(params="7B"), gpu_memory="80GiB", seq_len=4096))
    assert json.loads(json.dumps(result.to_json())) == printed


def test_bad_options_are_plan_errors() -> None:
    for opts in (
        PlanOptions(model=ModelSource(params="7B")),  # no memory and no preset
        PlanOptions(model=ModelSource(params="7B", config_path="c.json"), gpu_memory="80GiB"),
        PlanOptions(model=ModelSource(params="7B"), gpu_memory="80GiB", trainable="2%", lora_rank=8),
    ):
        try:
            run_plan(opts)
        except PlanError as exc:
            assert str(exc).count("\n") == 0
        else:
            raise AssertionError(f"accepted {opts}")
    try:
        largest(PlanOptions(model=ModelSource(params="7B"), gpu_memory="80GiB", largest_model=True))
    except PlanError as exc:
        assert "--largest-model" in str(exc)
    else:
        raise AssertionError("--largest-model with --params was accepted")

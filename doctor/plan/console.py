"""The planner's console tables: one row per dp x tp x pp x ZeRO layout (its best searched
setting), memory in GiB, every time in seconds with one precision for all time cells."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pgdoctor.knowledge import terminal
from pgdoctor.knowledge.units import fmt_seconds_fixed, seconds_decimals
from pgdoctor.plan.layouts import Layout, best_per_layout
from pgdoctor.plan.memory import MemoryInput
from pgdoctor.plan.optim import bytes_per_param_line

RC = {"none": "-", "selective": "sel", "full": "full"}


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f}"


def _tokens(n: float) -> str:
    if n < 1e3:
        return f"{n:.3g}"
    return f"{n / 1e3:.1f}K" if n < 1e6 else f"{n / 1e6:.2f}M"


def bytes_per_param(mi: MemoryInput) -> str:
    """The B/param convention of these options, as the console prints it."""
    p, o = mi.precision, mi.optimizer
    state = o.state_bytes * p.state_scale if o.kind == "dense" else o.state_bytes
    if o.kind == "8bit":
        state = o.state_bytes + 8 / 256
    note = {
        "dense": "",
        "8bit": " (bitsandbytes: 2 x uint8 + fp32 absmax per 256)",
        "factored": " per vector element; a matrix keeps rows + columns",
    }[o.kind]
    line = bytes_per_param_line(p.param_bytes, p.grad_bytes, p.master_bytes, state, o.name) + note
    conv = (
        "ZeRO paper's 2+2+12 = 16; 18 with fp32 gradients (--precision bf16-mixed-fp32-grads, Megatron)"
        if p.name in ("bf16-mixed", "fp16-mixed") and o.name in ("adam", "adamw")
        else ""
    )
    return line + (f"; {conv}" if conv else "")


# The memory breakdown is what a narrow terminal drops first: total and free say whether a layout
# fits; --wide and --json keep the parts.
BREAKDOWN = ("params", "grads", "optim", "acts", "buffers")


def _table(
    title: str, cols: list[str], rows: list[list[str]], console: Any, left: str = ""
) -> tuple[Any, bool]:
    """A borderless table of `cols`; on a terminal too narrow for it, without the breakdown
    columns (returns whether they were dropped)."""
    from rich.table import Table

    def build(drop: tuple[str, ...]) -> Any:
        t = Table(title=title, title_justify="left", box=None, pad_edge=False)
        keep = [i for i, c in enumerate(cols) if c not in drop]
        for i in keep:
            # fold, never an ellipsis: a cut number ("0.31…") reads as another number
            t.add_column(cols[i], justify="left" if cols[i] == left else "right", overflow="fold")
        for r in rows:
            t.add_row(*(r[i] for i in keep))
        return t

    table = build(())
    if (
        terminal.fit()
        and console.measure(table, options=console.options.update_width(terminal.WIDE)).maximum
        > console.width
    ):
        return build(BREAKDOWN), True
    return table, False


def render_tables(
    layouts: Sequence[Layout], top: int, out: Any, offload: bool = False, moe: bool = False
) -> None:
    cp = any(lay.cp > 1 for lay in layouts)
    from rich.console import Console

    console = Console(
        file=out,
        force_terminal=False,
        no_color=True,
        highlight=False,
        width=terminal.width(220),
        soft_wrap=not terminal.fit(),
    )
    rows_all = best_per_layout(layouts)
    fitting = [lay for lay in rows_all if lay.fits]
    shown = fitting[:top]
    places = seconds_decimals(
        [
            t
            for lay in shown
            for t in (
                lay.traffic.dp_s,
                lay.traffic.tp_s,
                lay.traffic.pp_s,
                lay.offload_s,
                lay.a2a_s,
                lay.cp_s,
                lay.step_s,
            )
        ]
    )

    def secs(t: float) -> str:
        return fmt_seconds_fixed(t, places)

    cols = (
        ["#", "dp", "tp", "pp", "zero"]
        + (["ep"] if moe else [])
        + (["cp"] if cp else [])
        + ["mb", "m", "rc", "params", "grads", "optim", "acts", "buffers", "total", "free"]
        + (["host/node", "offload"] if offload else [])
        + ["dp comm", "tp comm", "pp comm"]
        + (["a2a"] if moe else [])
        + (["cp comm"] if cp else [])
        + ["bubble", "step", "tok/s", "compute%"]
    )
    good_rows: list[list[str]] = []
    for i, lay in enumerate(shown, 1):
        mem, tr = lay.memory, lay.traffic
        cells = (
            ["*" if i == 1 else str(i), str(lay.dp), str(lay.tp), str(lay.pp), lay.zero_label]
            + ([str(lay.ep)] if moe else [])
            + ([str(lay.cp)] if cp else [])
            + [
                str(lay.micro_batch),
                str(lay.micro_batches) + ("?" if lay.micro_batches_assumed else ""),
                RC[lay.recompute],
                _gib(mem.states.params),
                _gib(mem.states.grads),
                _gib(mem.states.master + mem.states.optimizer),
                _gib(mem.activations),
                _gib(mem.buffers + mem.overhead),
                _gib(mem.total),
                _gib(lay.headroom_bytes) + ("!" if lay.tight else ""),
            ]
        )
        if offload:
            cells += [_gib(lay.host_node_bytes), secs(lay.offload_s)]
        cells += (
            [secs(tr.dp_s), secs(tr.tp_s), secs(tr.pp_s)]
            + ([secs(lay.a2a_s)] if moe else [])
            + ([secs(lay.cp_s)] if cp else [])
            + [
                f"{lay.bubble:.0%}",
                secs(lay.step_s),
                _tokens(lay.tokens_per_s),
                f"{lay.compute_fraction:.0%}",
            ]
        )
        good_rows.append(cells)
    table, folded = _table(
        "Layouts that fit (best first); memory per GPU in GiB, times per step in seconds",
        cols,
        good_rows,
        console,
        left="#",
    )
    if shown:
        console.print(table)
        if len(fitting) > top:
            console.print(f"... and {len(fitting) - top} more that fit (--top N, --json for all)")
        console.print(
            "mb: micro-batch; m: micro-batches per step (? = assumed); rc: recomputation (- none, sel, "
            "full); "
            "optim: fp32 master + optimizer state; free!: under the headroom; zero 3h: hybrid sharding"
        )
        console.print(
            "buffers: DDP buckets or ZeRO-3's gathered layer, plus the fixed overhead; "
            "dp comm may overlap backward, tp/pp comm does not"
            + ("; host/node: offloaded states x 1.5 (DeepSpeed's buffers)" if offload else "")
        )
    misfits = [lay for lay in rows_all if not lay.fits]
    if not misfits:
        _say_folded(console, folded)
        return
    rows = misfits[: max(3, top - len(shown))] if shown else misfits[:top]
    bcols = (
        ["dp", "tp", "pp", "zero"]
        + (["ep"] if moe else [])
        + (["cp"] if cp else [])
        + ["mb", "rc", "params", "grads", "optim", "acts", "buffers", "total", "over by"]
    )
    if offload:
        bcols.append("host/node")
    bad_rows: list[list[str]] = []
    for lay in rows:
        mem = lay.memory
        cells = (
            [str(lay.dp), str(lay.tp), str(lay.pp), lay.zero_label]
            + ([str(lay.ep)] if moe else [])
            + ([str(lay.cp)] if cp else [])
            + [
                str(lay.micro_batch),
                RC[lay.recompute],
                _gib(mem.states.params),
                _gib(mem.states.grads),
                _gib(mem.states.master + mem.states.optimizer),
                _gib(mem.activations),
                _gib(mem.buffers + mem.overhead),
                _gib(mem.total),
                _gib(max(0, -lay.headroom_bytes)),
            ]
        )
        if offload:
            cells.append(_gib(lay.host_node_bytes) + ("!" if not lay.host_fits else ""))
        bad_rows.append(cells)
    bad, bad_folded = _table(
        f"Layouts that do not fit ({len(misfits)}, closest first); GiB per GPU", bcols, bad_rows, console
    )
    folded = folded or bad_folded
    if shown:
        console.print("")
    console.print(bad)
    if len(misfits) > len(rows):
        console.print(f"... and {len(misfits) - len(rows)} more that do not fit")
    _say_folded(console, folded)


def _say_folded(console: Any, folded: bool) -> None:
    if folded:
        console.print(
            f"(this terminal is {console.width} columns: the memory breakdown ({', '.join(BREAKDOWN)}) "
            "is left out; --wide or --json shows it)"
        )


def print_plan(result: Any, top: int, out: Any) -> None:
    """The console view of a PlanResult (pgdoctor.plan.run): header, tables, why; the findings
    follow from the report renderer."""
    shape, fabric = result.shape, result.fabric

    def say(line: str = "") -> None:
        for part in terminal.wrap(line) if line else [line]:  # between words on a terminal
            out.write(part + "\n")

    say(
        f"model ({shape.name}): {result.count_label()}, {shape.layers} layers, hidden "
        f"{shape.hidden}, {shape.heads} heads, seq {result.seq_len}"
    )
    say(
        f"GPUs: {fabric.nodes} node(s) x {fabric.gpus_per_node}; inside nodes {fabric.intra.name} "
        f"{fabric.intra.busbw_gbps:.3g} GB/s busbw, between nodes {fabric.inter.name} "
        f"{fabric.inter.busbw_gbps:.3g} GB/s x {fabric.nics_per_node} NIC(s)"
    )
    say(f"B/param: {result.bytes_per_param}")
    for note in result.notes:
        say(f"note: {note}")
    say()
    out.flush()
    render_tables(result.layouts, top, out, result.options.offload != "none", result.moe is not None)
    if result.why:
        say()
        say(result.why)


def print_largest(result: Any, top: int, out: Any) -> None:
    """The console view of a LargestResult (pgdoctor.plan.run): one row per layout."""
    inp, rows = result.inp, result.rows

    def say(line: str) -> None:
        out.write(line + "\n")

    say(
        f"Largest LLaMA-style model per layout on {inp.fabric.gpus} GPUs of "
        f"{inp.gpu_memory_bytes / 2**30:.1f} "
        f"GiB (seq {inp.memory.seq_len}, micro-batch {inp.memory.micro_batch}, recompute "
        f"{inp.memory.recompute}; fits: total <= GPU memory)"
    )
    say(f"{'dp':>4} {'tp':>3} {'pp':>3} {'zero':>4} {'params':>10}")
    for r in rows[:top]:
        say(f"{r.dp:>4} {r.tp:>3} {r.pp:>3} {r.zero:>4} {r.params / 1e9:>9.3g}B")
    if len(rows) > top:
        say(f"... and {len(rows) - top} more layouts (--top N, --json for all)")

"""The NCCL-format scenarios of the fourth frozen flight-recorder set, with what each one's answer
must be (tests/helpers/fr_unseen3.py writes them; tests/fixtures/fr_unseen3/README.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from tests.helpers.fr_unseen3 import (
    Case,
    Op,
    Rank,
    exp,
    fsdp_program,
    pp_program,
    run,
    tp_dp,
    tp_dp_program,
    world,
    world_steps,
)


def _pp_deadlock_program(r: int) -> list[Op]:
    """Stages 2 and 3 both send first (a schedule bug: both think they are the sender of this
    micro-batch's activations); stages 0 and 1 exchange correctly, then all reduce."""
    ops = {
        0: [Op("0", "send", ((4096,),), peer=1), Op("0", "recv", ((4096,),), peer=1)],
        1: [Op("0", "recv", ((4096,),), peer=0), Op("0", "send", ((4096,),), peer=0)],
        2: [Op("0", "send", ((4096,),), peer=3), Op("0", "recv", ((4096,),), peer=3)],
        3: [Op("0", "send", ((4096,),), peer=2), Op("0", "recv", ((4096,),), peer=2)],
    }[r]
    return [Op("0", "all_reduce", ((2048,),))] * 3 + ops + [Op("0", "all_reduce", ((2048,),))]


def _two_same_rank_pgs(r: int) -> list[Op]:
    ops: list[Op] = []
    for s in range(6):
        a = Op("1", "all_reduce", ((8192,),))
        b = Op("0", "all_gather", ((256,),), ((1024,),))
        ops += [b, a] if (r == 2 and s == 3) else [a, b]
    return ops


def _aux(n_steps: int, aux_steps: int) -> Callable[[int], list[Op]]:
    def prog(r: int) -> list[Op]:
        ops: list[Op] = []
        for s in range(n_steps):
            ops.append(Op("0", "all_reduce", ((4096,),)))
            if r in (0, 2) and s < aux_steps:
                ops.append(Op("1", "all_reduce", ((16,),)))
                ops.append(Op("1", "broadcast", ((16,),)))
        return ops

    return prog


def _coalesced_count(r: int) -> list[Op]:
    warm = [Op("0", "all_reduce", ((2048,),))] * 3
    n = 3 if r == 1 else 4
    group = [Op("0", "all_reduce", ((1 << (10 + i),),), coalesced=n if i == 0 else 0) for i in range(n)]
    return warm + group + [Op("0", "all_reduce", ((2048,),))]


def _rs_coalesced(r: int) -> list[Op]:
    warm = [Op("0", "all_reduce", ((2048,),))] * 3
    ins, outs = (((64,), (48,)), ((16,), (12,))) if r == 3 else (((64,), (32,)), ((16,), (8,)))
    return [*warm, Op("0", "reduce_scatter_tensor_coalesced", ins, outs), Op("0", "all_reduce", ((2048,),))]


def _rs_size(r: int) -> list[Op]:
    ops = fsdp_program(8, 5)(r)
    if r == 7:
        ops[7] = Op("0", "_reduce_scatter_base", ((2048 * 8 + 512,),), ((2048 + 64,),), dtype="BFloat16")
    return ops


def _ahead(ranks: dict[int, Rank]) -> None:
    """Rank 3 ran out of data first and went on to the evaluation: NCCL is asynchronous, so it
    queued two more collectives behind the all_gather that is stuck."""
    rk = ranks[3]
    for _ in range(2):
        rk.seq["0"] += 1
        e = rk.record(Op("0", "all_reduce", ((1,),)), rk.seq["0"], 0, 1_712_000_100_000_000_000)
        e.update(state="scheduled", time_discovered_started_ns=None)


def _last_state(states: dict[int, str]) -> Callable[[dict[int, Rank]], None]:
    def edit(ranks: dict[int, Rank]) -> None:
        for r, rk in ranks.items():
            last = rk.entries[-1]
            last.update(state=states.get(r, "started"), retired=False, time_discovered_completed_ns=None)
            last.pop("duration_ms", None)
            if last["state"] == "scheduled":
                last["time_discovered_started_ns"] = None

    return edit


def cases() -> list[Case]:
    c: list[Case] = []
    w4, w8 = world(4), world(8)
    c.append(
        Case(
            "pp_recv_never_posted",
            run(w4, pp_program(4, 4), {2: 4}),
            "2.10",
            exp(
                "RUN287",
                [2],
                "0",
                None,
                "send",
                "p2p_unmatched",
                "stage 2 stuck in its own code before posting micro-batch 2's recv; stage 1's "
                "send and stage 3's recv wait for it",
            ),
        )
    )
    c.append(
        Case(
            "pp_send_size_mismatch",
            run(w4, pp_program(4, 4, sizes={(1, 1): 2048})),
            "2.7",
            exp(
                "RUN288",
                [1, 2],
                "0",
                None,
                "send",
                "p2p_size",
                "stage 1 sends 2048 elements for micro-batch 1 where stage 2 receives 4096",
            ),
        )
    )
    c.append(
        Case(
            "pp_send_send_deadlock",
            run(w4, _pp_deadlock_program),
            "2.4",
            exp(
                "RUN287",
                [2, 3],
                "0",
                None,
                "send",
                "p2p_deadlock",
                "stages 2 and 3 both send to each other first; no recv posted on either side",
            ),
        )
    )
    g8 = tp_dp(8, 2)
    c.append(
        Case(
            "tp_one_group_stuck_8",
            run(g8, tp_dp_program(g8, 5), {5: 9}),
            "2.10",
            exp(
                "RUN281",
                [5],
                "3",
                7,
                "all_reduce",
                "missing",
                "rank 5 never enters step 3's TP all_reduce in TP group 3 [4,5]; the DP groups "
                "wait for ranks 4 and 5 as a consequence",
            ),
        )
    )

    def a2a(r: int, s: int) -> Optional[Op]:
        if s == 3:
            return Op("0", "all_to_all", ((80,),) if r == 2 else ((64,),), ((64,),))
        return None

    c.append(
        Case(
            "alltoall_single_split",
            run(w4, world_steps(4, 5, a2a)),
            "2.10",
            exp(
                "RUN284",
                [2],
                "0",
                4,
                "all_to_all",
                "total_numel",
                "all_to_all_single: rank 2's input splits sum to 80 where every rank expects 16 "
                "from each peer (64)",
            ),
        )
    )

    def bf16(r: int, s: int) -> Optional[Op]:
        return Op("0", "all_reduce", ((4096,),), dtype="BFloat16") if (r == 6 and s == 4) else None

    c.append(
        Case(
            "dtype_bf16_allreduce_8",
            run(w8, world_steps(8, 6, bf16)),
            "2.4",
            exp(
                "RUN285",
                [6],
                "0",
                5,
                "all_reduce",
                "input_dtype",
                "rank 6 reduces a bfloat16 buffer where the others reduce float32",
            ),
        )
    )

    def eval_early(r: int, s: int) -> Optional[Op]:
        return Op("0", "all_gather", ((4096,),), ((4 * 4096,),)) if (r == 3 and s == 6) else None

    c.append(
        Case(
            "ran_ahead_uneven_data",
            run(w4, world_steps(4, 8, eval_early)),
            "2.10",
            exp(
                "RUN282",
                [3],
                "0",
                7,
                "all_reduce",
                "op_type",
                "rank 3 ran out of batches first, went on to the evaluation's all_gather and "
                "queued two more collectives; the others are still in step 7's all_reduce",
            ),
            edit=_ahead,
        )
    )
    c.append(
        Case(
            "empty_json_no_entries",
            run(w8, world_steps(8, 10), {4: 7}),
            "json",
            exp(
                "RUN281",
                [4],
                "0",
                8,
                "all_reduce",
                "missing",
                "rank 4 never issues seq 8; rank 6's recorder was empty, and its JSON dump has no "
                "entries key (dump_json omits it)",
            ),
            empty=[6],
        )
    )
    g_aux = {"0": ("default_pg", [0, 1, 2, 3]), "1": ("aux", [0, 2])}
    c.append(
        Case(
            "ring_wrapped_offsets",
            run(g_aux, _aux(300, 100), {1: 280}),
            "2.10",
            exp(
                "RUN281",
                [1],
                "0",
                281,
                "all_reduce",
                "missing",
                "40-entry rings; ranks 0 and 2 ran 200 extra collectives in group 1 so record ids "
                "are out of step; rank 1 never issued seq 281",
            ),
            ring=40,
        )
    )
    g_two = {"0": ("default_pg", [0, 1, 2, 3]), "1": ("dp_shard", [0, 1, 2, 3])}
    c.append(
        Case(
            "same_ranks_two_pgs",
            run(g_two, _two_same_rank_pgs),
            "2.10",
            exp(
                "RUN281",
                [2],
                "1",
                4,
                "all_reduce",
                "missing",
                "two groups with the same four ranks; rank 2 issued step 3's all_gather (group 0) "
                "before the all_reduce (group 1) the others are in",
                also=[("RUN281", [0, 1, 3])],
            ),
        )
    )
    c.append(
        Case(
            "coalesced_count_mismatch",
            run(w4, _coalesced_count),
            "2.7",
            exp(
                "RUN289",
                [1],
                "0",
                4,
                None,
                "coalesced_count",
                "a coalesced group of 4 all_reduces; rank 1 put 3 in it",
            ),
        )
    )
    case = exp(
        "RUN289",
        [3],
        "0",
        4,
        "reduce_scatter_tensor_coalesced",
        "coalesced_size",
        "reduce_scatter_tensor_coalesced: rank 3's second tensor is 48 where the others give 32",
    )
    case["accept_codes"] = ["RUN284"]
    c.append(Case("coalesced_rs_tensor_size", run(w4, _rs_coalesced), "2.10", case))
    w64 = world(64)
    c.append(
        Case(
            "missing_dump_64",
            run(w64, world_steps(64, 20), {41: 19}),
            "2.10",
            exp(
                "RUN290",
                [41],
                "0",
                20,
                "all_reduce",
                "no_dump",
                "rank 41 died before seq 20 and left no dump; the 63 others wait in seq 20",
            ),
            drop=[41],
        )
    )
    c.append(
        Case(
            "fsdp_slow_rank_64_wrapped",
            run(w64, fsdp_program(64, 150), {19: 297}),
            "2.10",
            exp(
                "RUN281",
                [19],
                "0",
                298,
                "_reduce_scatter_base",
                "missing",
                "64-rank FSDP, 100-entry rings; rank 19 never issues seq 298 (a reduce_scatter)",
            ),
            ring=100,
        )
    )
    c.append(
        Case(
            "zero_timestamps_json_state",
            run(w4, world_steps(4, 12)),
            "json",
            exp(
                "RUN286",
                [2],
                "0",
                12,
                "all_reduce",
                "state",
                "rank 2's seq 12 is scheduled (never started on its stream), the others started "
                "it; every time_created_ns is 0 and JSON writes 0 for absent discovery times",
            ),
            zero_times=True,
            edit=_last_state({2: "scheduled"}),
        )
    )

    def half_out(r: int, s: int) -> Optional[Op]:
        if s == 2:
            return Op(
                "0", "_reduce_scatter_base", ((4096,),), ((1024,),), out_dtype="Half" if r == 1 else None
            )
        return None

    c.append(
        Case(
            "frames_empty_out_dtype",
            run(w4, world_steps(4, 4, half_out)),
            "2.10",
            exp(
                "RUN285",
                [1],
                "0",
                3,
                "_reduce_scatter_base",
                "output_dtype",
                "rank 1's reduce_scatter writes a float16 output of a float32 input; no frames "
                "(includeStackTraces=False)",
            ),
            frames=False,
        )
    )
    c.append(
        Case(
            "header_only_enqueued_behind",
            run(w8, world_steps(8, 57), {6: 56}),
            "2.7",
            exp(
                "RUN281",
                [6],
                "0",
                57,
                None,
                "missing",
                "header-only dumps: rank 6's last_enqueued_collective is 56, the others' 57",
            ),
            header_only=True,
        )
    )
    c.append(
        Case(
            "header_only_not_started",
            run(w4, world_steps(4, 33)),
            "2.4",
            exp(
                "RUN286",
                [1],
                "0",
                33,
                None,
                "state",
                "header-only dumps: all enqueued 33, rank 1's last_started_collective is 32",
            ),
            header_only=True,
            edit=_last_state({1: "scheduled"}),
        )
    )
    c.append(
        Case(
            "v22_rank0_missing",
            run(w4, world_steps(4, 21), {0: 20}),
            "2.2",
            exp(
                "RUN281",
                [0],
                "0",
                21,
                "all_reduce",
                "missing",
                "torch 2.2's fields (seq_id, no pg_config); rank 0 never issues seq 21",
            ),
        )
    )

    def bcast(r: int, s: int) -> Optional[Op]:
        return Op("0", "broadcast", ((4096,),)) if (r == 2 and s == 6) else None

    c.append(
        Case(
            "v23_op_mismatch",
            run(w4, world_steps(4, 9, bcast)),
            "2.3",
            exp(
                "RUN282",
                [2],
                "0",
                7,
                "all_reduce",
                "op_type",
                "torch 2.3's fields; rank 2 broadcasts where the others all_reduce",
            ),
        )
    )
    c.append(
        Case(
            "v25_rs_input_size_8",
            run(w8, _rs_size),
            "2.5",
            exp(
                "RUN284",
                [7],
                "0",
                8,
                "_reduce_scatter_base",
                "input_size",
                "torch 2.5's fields (nccl_version); rank 7's reduce_scatter input is 16896 where "
                "the others give 16384",
            ),
        )
    )
    c.append(
        Case(
            "clean_wrapped_offsets",
            run(g_aux, _aux(120, 60)),
            "2.10",
            exp(None, why="a clean job whose 30-entry rings wrapped at different record ids"),
            ring=30,
        )
    )
    c.append(
        Case(
            "header_only_tp_group_8",
            run(g8, tp_dp_program(g8, 5), {5: 9}),
            "2.10",
            exp(
                "RUN281",
                [5],
                "3",
                7,
                None,
                "missing",
                "header-only dumps of tp_one_group_stuck_8: pg_status is keyed by each rank's "
                "own pg_id, not the group's name",
            ),
            header_only=True,
        )
    )
    return c

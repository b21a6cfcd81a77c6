"""The functions of torch.distributed a rank blocks in until its peers arrive, by name: a Python frame of
one of them (in torch/distributed/) says where a rank waits. One list for the stack readers of diagnose
(rules/stuck_stacks.py, rules/interrupted_waits.py) and of `pgdoctor hang` (diagnose/stacks/evidence.py).
"""

from __future__ import annotations

# distributed_c10d.py's collectives and point-to-point calls (1.x-2.x names, the *_object helpers included)
COLLECTIVE_CALLS = frozenset(
    {
        "all_reduce",
        "all_gather",
        "all_gather_into_tensor",
        "all_gather_object",
        "reduce_scatter",
        "reduce_scatter_tensor",
        "all_to_all",
        "all_to_all_single",
        "broadcast",
        "broadcast_object_list",
        "reduce",
        "gather",
        "gather_object",
        "scatter",
        "scatter_object_list",
        "barrier",
        "monitored_barrier",
        "send",
        "recv",
        "isend",
        "irecv",
        "batch_isend_irecv",
    }
)
# a Work's wait (Work.wait, the async handle's _wait, wait_all of a coalesced group)
WAIT_CALLS = frozenset({"wait", "_wait", "wait_all"})
# set-up calls that are collectives themselves (the store barrier, DDP's first broadcast and shape check)
SETUP_CALLS = frozenset(
    {
        "init_process_group",
        "new_group",
        "_store_based_barrier",
        "_sync_module_states",
        "_sync_params_and_buffers",
        "_verify_param_shape_across_processes",
    }
)

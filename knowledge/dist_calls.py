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
# DDP's parameter and buffer sync, a broadcast of the authoritative rank's tensors (nn/parallel/distributed.py
# 1.x-2.x: _sync_params_and_buffers -> _distributed_broadcast_coalesced, _sync_module_states; the copies in
# torch/distributed/utils.py, 2.x; _sync_buffers / _sync_params of a later step). DDP's shape check before it
# (_verify_param_shape_across_processes) raises on a mismatch, not after a wait: not among them.
DDP_SYNC_CALLS = frozenset(
    {
        "_sync_params_and_buffers",
        "_distributed_broadcast_coalesced",
        "_sync_module_states",
        "_sync_buffers",
        "_sync_params",
        "_broadcast_coalesced",
        "_sync_module_buffers",
    }
)
# The process group's own start, where a wait is the ranks' meeting (rendezvous), not a collective's
MEETING_CALLS = frozenset({"init_process_group", "new_group", "_new_group_with_tag", "_store_based_barrier"})


def cut_in_collective(frames: list[tuple[str, str]]) -> str | None:
    """The collective a Python stack cut before its exception line ends in, from its (file, function) frames
    innermost last: a call of distributed_c10d.py's collectives or DDP's sync, past c10d_logger's decorator
    (2.1+, its frame calls through); None when it ends elsewhere or inside the process group's start."""
    if any(func in MEETING_CALLS for _file, func in frames):
        return None
    for file, func in reversed(frames):
        path = file.replace("\\", "/")
        if path.endswith("torch/distributed/c10d_logger.py"):
            continue
        if path.endswith("torch/distributed/distributed_c10d.py") and func in COLLECTIVE_CALLS:
            return func
        if path.endswith(("torch/nn/parallel/distributed.py", "torch/distributed/utils.py")):
            return func if func in DDP_SYNC_CALLS else None
        return None
    return None

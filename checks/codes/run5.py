"""Finding codes of `pgdoctor diagnose` from RUN500 on (RUN300-RUN399 are spent: run3.py, run3b.py;
RUN401-RUN409 are the lab's, checks/codes/lab.py): checks/codes/run.py re-exports every name here too,
so a rule reads all its codes as `run.X`. Categories as in run.py; the range says nothing about the
category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# -- s8: vLLM's multi-GPU engine (doctor/diagnose/rules/vllm_engine.py; read in vllm 0.4.3, 0.6.6, 0.34.0) --

# Category collective_timeout: vLLM's executor waited in vain for its workers (v1 multiproc_executor.py
# "TimeoutError: RPC call to execute_model timed out.", v0 async_llm_engine.py "Engine iteration timed out.
# This should never happen!"): a worker is stuck, usually in a tensor-parallel collective. Remedy: find the
# stuck worker (py-spy dump, NCCL_DEBUG=INFO), fix its peer; VLLM_RPC_TIMEOUT only if it was slow, not stuck.
VLLM_RPC_TIMEOUT = register_code(
    "RUN540",
    "vllm-worker-rpc-timeout",
    "fail",
    "collective_timeout",
    "vLLM's engine timed out waiting for its workers (a worker is stuck)",
    AREA,
)
# Category collective_timeout: shm_broadcast.py's "No available shared memory broadcast block found in 60
# seconds" with the engine never up after it (a long compile prints it in healthy runs): a worker hangs.
# Remedy: py-spy dump the workers; disable custom all-reduce / set NCCL_P2P_DISABLE=1 if they sit in it.
VLLM_SHM_BROADCAST_STALL = register_code(
    "RUN541",
    "vllm-shm-broadcast-stall",
    "warn",
    "collective_timeout",
    "vLLM's workers stopped reading the engine's shared-memory broadcasts (a worker hangs)",
    AREA,
)
# Category rendezvous: vLLM's Ray executor found several nodes behind one IP address ("Every node should
# have a unique IP address"): containers on a bridge network, or one VLLM_HOST_IP on every node. Remedy:
# host networking (docker --network host) and each node's own VLLM_HOST_IP / ray start --node-ip-address.
VLLM_DUPLICATE_NODE_IP = register_code(
    "RUN542",
    "vllm-nodes-share-an-ip",
    "fail",
    "rendezvous",
    "vLLM's Ray nodes share one IP address (bridge-network containers or a copied VLLM_HOST_IP)",
    AREA,
)
# Category rendezvous: a headless vLLM data-parallel engine never got its front-end's handshake
# (v1/engine/core.py "Did not receive response from front-end process within 5 minutes"). Remedy: start the
# front-end, point --data-parallel-address / --data-parallel-rpc-port at it, open the port between nodes.
VLLM_DP_HANDSHAKE_TIMEOUT = register_code(
    "RUN543",
    "vllm-dp-handshake-timeout",
    "fail",
    "rendezvous",
    "A headless vLLM data-parallel engine never heard from its front-end",
    AREA,
)
# Category collective_timeout: SGLang's scheduler watchdog saw no forward batch finish in --watchdog-timeout
# seconds (managers/scheduler.py 0.4 "Watchdog timeout (self.watchdog_timeout=300)", utils/watchdog.py 0.5
# "Scheduler watchdog timeout (...)"): a rank hangs, usually in a TP collective. Remedy: py-spy the
# schedulers, find the stuck or dead peer (NCCL_DEBUG=INFO), --disable-custom-all-reduce for P2P hangs.
SGLANG_WATCHDOG_TIMEOUT = register_code(
    "RUN544",
    "sglang-watchdog-timeout",
    "fail",
    "collective_timeout",
    "SGLang's watchdog found a forward batch that never finished (a rank hangs)",
    AREA,
)

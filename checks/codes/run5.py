"""Finding codes of `pgdoctor diagnose` from RUN500 on (RUN300-RUN399 are spent: run3.py, run3b.py;
RUN401-RUN409 are the lab's, checks/codes/lab.py): checks/codes/run.py re-exports every name here too,
so a rule reads all its codes as `run.X`. Categories as in run.py; the range says nothing about the
category.
"""

from __future__ import annotations

from pgdoctor.checks.base import register_code

AREA = "run"

# --- r3 (RUN520-RUN529) ---

# Category nccl_network: aws-ofi-nccl (NCCL's libfabric / EFA plugin) refused a connection because the peer's
# connect message names another number of rails (EFA NICs behind the device) than this node has: "NET/OFI
# Unexpected number of remote rails for dev 3. Expected 4 but got 2" (rdma protocol, v1.7+; "remote control
# rails", v1.13+). Remedy: find the node with a missing / down EFA device (fi_info -p efa), or make the
# plugin's version and OFI_NCCL_* rail settings the same on every node.
NCCL_OFI_RAIL_MISMATCH = register_code(
    "RUN520",
    "nccl-ofi-rail-mismatch",
    "fail",
    "nccl_network",
    "NCCL's libfabric plugin (aws-ofi-nccl) and a peer disagree on the number of EFA rails",
    AREA,
)

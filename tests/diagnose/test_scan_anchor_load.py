"""The lines NCCL repeats for every channel and every peer hold no scanner anchor.

An NCCL_DEBUG=INFO log of a large job is mostly these lines (channels x peers x ranks, hundreds of
thousands of them), so one anchor that one of them holds makes the scanner stop on every such line:
twice a loose anchor did ('" : Using"' matched every 'NET/IB : Using'; '"/IB"' matched every NET/IB line),
and the scan of a 64 MiB INFO log fell from 0.09 s to about 3 s. `benchmarks/bench_diagnose.py` measures
the speed; this test names the lines, so a loose anchor fails here, with the anchor named, before any
benchmark runs. Wordings of NCCL 2.10 to 2.27, behind the prefixes launchers add. (The lines NCCL
prints once per communicator, its init summary and Init COMPLETE, are read on purpose: transport.py
judges the network from them.)
"""

from __future__ import annotations

import pytest

from pgdoctor.diagnose.text.scan import ANCHORS

PER_CHANNEL_AND_PEER = [
    "node-1:2231:2290 [3] NCCL INFO Channel 00/32 :    0   1   2   3   4   5   6   7",
    "node-1:2231:2290 [3] NCCL INFO Channel 05/0 : 3[3] -> 4[4] via P2P/IPC/read",
    "node-1:2231:2290 [3] NCCL INFO Channel 05/0 : 3[3] -> 4[4] via P2P/CUMEM/read",
    "node-1:2231:2290 [3] NCCL INFO Channel 07/1 : 3[3] -> 4[4] via P2P/IPC",
    "node-1:2231:2290 [7] NCCL INFO Channel 02/0 : 7[e1000] -> 8[7000] [send] via NET/IB/0/GDRDMA",
    "node-1:2231:2290 [7] NCCL INFO Channel 02/0 : 15[e1000] -> 0[7000] [receive] via NET/IB/3/GDRDMA",
    "node-1:2231:2290 [7] NCCL INFO Channel 02/0 : 7[7] -> 8[0] [send] via NET/IBext/0/GDRDMA",
    "node-1:2231:2290 [7] NCCL INFO Channel 02/0 : 7[7] -> 8[0] [send] via NET/Socket/1",
    "node-1:2231:2290 [7] NCCL INFO Channel 02/0 : 7[7] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA",
    "node-1:2231:2290 [3] NCCL INFO Channel 01/0 : 3[3] -> 2[2] via SHM/direct/direct",
    "node-1:2231:2290 [3] NCCL INFO Channel 03 : 3[3] -> 11[3] [send] via NET/IB/0/GDRDMA comm 0x55d5c0a0 nRanks 16",
    "node-1:2231:2290 [3] NCCL INFO Connected all rings",
    "node-1:2231:2290 [3] NCCL INFO Connected all trees",
    "node-1:2231:2290 [3] NCCL INFO Connected NVLS",
    "node-1:2231:2290 [3] NCCL INFO Trees [0] 2/-1/-1->3->4 [1] 2/-1/-1->3->4",
    "node-1:2231:2290 [3] NCCL INFO threadThresholds 8/8/64 | 128/8/64 | 512 | 512",
    "node-1:2231:2290 [3] NCCL INFO 32 coll channels, 0 collnet channels, 0 nvls channels, 32 p2p channels",
    "node-1:2231:2290 [3] NCCL INFO P2P Chunksize set to 524288",
    "node-1:2231:2290 [3] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/RoCE ; OOB ib0:10.0.0.1<0>",
    "node-1:2231:2290 [3] NCCL INFO AllReduce: opCount 3f sendbuff 0x7f2abfe00200 recvbuff 0x7f2abfe00200 count 1 datatype 7 op 0 root 0 comm 0x55d5c0a0 [nranks=16] stream 0xa5f5e20",
    "node-1:2231:2290 [3] NCCL INFO Setting affinity for GPU 3 to ffff,ffffffff",
    "node-1:2231:2290 [3] NCCL INFO Ring 00 : 3 -> 4 -> 5",
]
PREFIXES = ["", "[rank3]:", "[default3]:", "[1,3]<stdout>:", "node-1: ", "2024-06-03T10:12:18.916412931Z "]


@pytest.mark.parametrize("line", PER_CHANNEL_AND_PEER)
@pytest.mark.parametrize("prefix", PREFIXES)
def test_a_line_nccl_repeats_per_channel_or_peer_holds_no_anchor(prefix: str, line: str) -> None:
    data = (prefix + line).encode()
    held = [a for a in ANCHORS if a in data]
    assert held == [], f"anchors {held} stop the scanner on every such line of an INFO log"

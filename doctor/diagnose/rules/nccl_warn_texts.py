"""NCCL's WARN texts by what they mean, read from its sources (src/init.cc, enqueue.cc, group.cc,
misc/argcheck.cc, register/, graph/, transport/, plugin/, dev_runtime.cc, 2.3-2.28): the checks that
return ncclInvalidUsage / ncclInvalidArgument (USAGE_TEXT, one named group per kind of check), and the
texts whose cause does not depend on the ncclResult_t that carried them (DETAIL_TABLE). nccl_detail
reads a WARN line or torch's "Last error:" with them.
"""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.checks.codes import run as C
from pgdoctor.model import lazy_re

# The WARN texts NCCL returns ncclInvalidArgument / ncclInvalidUsage with (2.4-2.28), by check:
# argcheck.cc's pointer and operator checks ("AllReduce : sendbuff 0x7f.. is not a valid pointer", "..
# recvbuff allocated on device 1 mismatchs with NCCL device 0", "Send : buff argument is NULL",
# "invalid reduction operation 9", "reduction operation 5 unknown to this communicator"); init.cc's
# communicator checks ("comm 0x55.. has already been destroyed", "Invalid device count requested : 0",
# "improper usage of ncclCommInitRank", "ncclCommGetUniqueId should not be called when NCCL_COMM_ID is
# set", "ncclConfig_t argument not initialized via NCCL_CONFIG_INITIALIZER"); group.cc / enqueue.cc's
# group and p2p checks ("ncclGroupEnd: not in a group call.", "Trying to send to self without a
# matching recv", "peer 9 is not within valid range of ranks 8.", "Blocking and nonblocking
# communicators are not allowed in the same group."); a communicator used after an abort or revoke
# ("Attempt to use communicator before the previous operation returned ncclSuccess", "Comm 0x.. is in
# abort state", "AllReduce: communicator was revoked").
USAGE_TEXT = lazy_re.compile(
    r"(?P<pointer>is not a valid pointer|\w+ argument is NULL|allocated on device -?\d+ mismatchs? with "
    r"NCCL device|corrupted comm object)|"
    r"(?P<operator>invalid reduction operation|reduction operation -?\d+ unknown to this communicator|"
    r"operator (?:is a NCCL builtin|is garbage|unknown to this communicator)|ncclRedOpDestroy : |"
    r"FP8 reduction support begins with)|"
    r"(?P<destroyed>has already been destroyed)|"
    r"(?P<group>ncclGroupEnd: not in a group call|Multiple (?:starts|ends) found in group|"
    r"mixing different streams within a group call|Blocking and nonblocking communicators are not allowed|"
    r"in a ncclGroup\(\) can be CUDA graph captured|must either be all uncaptured or all captured)|"
    r"(?P<p2p>Trying to (?:send|recv) to self without a matching|peer -?\d+ is not within valid range)|"
    r"(?P<init>improper usage of ncclCommInitRank|Invalid device count requested|invalid device count \(|"
    r"rank -?\d+ exceeds ndev|Invalid device -?\d+ \(totalnDev|should not be called when NCCL_COMM_ID is set|"
    r"not initialized via NCCL_\w+_INITIALIZER|Invali[dg] config \w+(?: \w+)? attribute value)|"
    r"(?P<aborted>before the previous operation returned ncclSuccess|is in abort state|"
    r"communicator was revoked)|"
    # Too much in flight at once (enqueue.cc / group.cc 2.4-2.18, the cases torch's "invalid usage" text
    # names: "too many async ops, too many collectives at once"): "Too many async operations in progress,
    # max is 2048", "Too many aggregated operations (2048 max)", "... on channel 3 (32 max)", "Trying to
    # launch too many collectives", "Trying to launch too many work elements, max is 512".
    r"(?P<too_many>Too many (?:async|aggregated) operations|Trying to launch too many)|"
    # CUDA graph capture of NCCL calls (group.cc / misc/strongstream.cc 2.9-2.28).
    r"(?P<graph>Illegal to have some communicators in graph mode|Stream is not being captured by the "
    r"expected graph)|"
    # User buffer registration (ncclCommRegister / ncclCommDeregister / ncclMemAlloc, init.cc and
    # register.cc 2.19-2.28): "register fails, buffer 0x.. (aligned false, granularity 2097152) and size ..
    # for registration", "Invalid arguments comm 0x.., buff 0x.., size 0, handle 0x..", "Invalid handle
    # 0x..", "Deregister: Could not find handle", and the symmetric-window checks of argcheck.cc ("Coll
    # AllReduce size 1024 symmetric registration check failed on rank 3: ...").
    r"(?P<registration>register fails, buffer|Invalid arguments comm \S+ (?:buff|handle)|Invalid handle "
    r"0x|Deregister: Could not find handle|symmetric registration check failed|"
    r"Window address must be suitably aligned|Could not find communicator matching window|"
    r"Invalid regBufType)|"
    # NCCL settings the job gave it that it cannot use: "'NCCL_WORK_FIFO_DEPTH=1024' is too small",
    # NCCL_ALGO / NCCL_PROTO strings graph/tuning.cc cannot parse ("Unrecognized element token 'Rings'
    # when parsing 'allreduce:Rings'"), "Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> ...".
    r"(?P<setting>'NCCL_\w+=[^']*' is too small|Unrecognized (?:element|prefix) token|All entries except "
    r"the first must have a prefix|Invalid NCCL_COMM_ID)|"
    # Communicators derived from a parent (ncclCommSplit / ncclCommShrink / ncclCommGrow, 2.18-2.28):
    # "Split shares resources, but parent comm netName IB is different from child comm netName Socket",
    # "Comm config netName (IB) does not match the parent (Socket)", "ncclCommGrow: new rank 9 exceeds
    # total ranks 8".
    r"(?P<derived>Split shares resources, but parent comm|does not match the parent \(|ncclComm(?:Grow|"
    r"Shrink): )|"
    # A user-created reduction operator used with another data type (enqueue.cc, ncclRedOpCreatePreMulSum).
    r"(?P<redop>supplied to user-created ncclRedOp_t does not match)|"
    # The device-initiated and one-sided APIs of 2.27+ (dev_runtime.cc, enqueue.cc, gin/, rma/,
    # mem_manager.cc): "ncclPutSignal: peerWin is NULL", "ncclWaitSignal: invalid arguments", "GIN not
    # supported.", "User requested GIN but not all ranks in the communicator support GIN", "RMA not
    # supported.", "One-sided RMA requires CUDA driver 12.5 or later", "Communicator does not support
    # symmetric memory!", "MemManager: Already suspended", "Cannot create device communicator:
    # ncclDevCommRequirements_t argument must be initialized via NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER".
    r"(?P<device_api>ncclPutSignal\b|ncclWaitSignal: |ncclSignal: |MemManager: (?:Suspend|Resume|Already|"
    r"Not in|MemStats)|Memory (?:suspend|resume) not supported|GIN (?:not supported|strong signals|VA "
    r"signals)|GIN plugin does not support|User requested GIN|RMA not supported|One[- ]sided RMA|"
    r"does not support symmetric memory|Multimem pointer requested|Multicast support requested for team|"
    r"initialized via NCCL_\w+_INITIALIZER|is invalid \(must be 0\))|"
    # NIC selection and merging the job's NCCL_IB_HCA / NCCL_NET_FORCE_MERGE / NCCL_IB_MERGE_NICS ask for and
    # the node cannot give (graph/topo.cc, graph/search.cc, net_ib 2.23+): "NET/IB : Attempted to merge
    # incompatible devices: ... Try selecting NICs of only one link type using NCCL_IB_HCA", "TOPO/NET : Only
    # matched 1 devices, 2 requested from mlx5_0+mlx5_1", "Rank 3 requires NIC 1 but that NIC is not available
    # for rank 11"; net_ib/connect.cc's "Attempted to connect incompatible devices: [0]mlx5_0:1/IB and
    # [0]mlx5_0:1/RoCE" and "Local mergedDev=.. has a different number of devices=2 as remoteDev=..", 2.27's
    # "NET/IB : Remote IB device is incompatible with the local [0]mlx5_0:1/RoCE. Try selecting NICs ...".
    r"(?P<nic_config>Can't make virtual NIC|Cannot allocate any more virtual devices|Cannot use physical "
    r"device|Attempted to (?:merge|connect) incompatible devices|has a different number of devices=|"
    r"Remote \S+ device is incompatible with the local|"
    r"Requested properties for vNic|merge multiple devices "
    r"together when NCCL_IB_MERGE_NICS=0|Specified fused NIC|Fusing NET devices from different NUMA|"
    r"TOPO/NET : Only matched|requires NIC -?\d+ but that NIC is not available|NCCL cannot use (?:more than "
    r"\d+ plane IDs|a plane ID)|NCCL_IB_SUBNET_PREFIX_LEN=\S+ is out of range)"
)

# The proxy's Unix domain socket that passes cuMem file descriptors between a node's ranks (2.17+,
# misc/ipcsocket.cc and proxy.cc; RUN615): "UDS: Receiving data over socket failed : 11", "UDS: Sending data
# over socket /tmp/nccl-socket-1-e2c1 failed : Connection refused (111)", "UDS: Socket creation error : ...",
# "UDS: Binding to socket ... failed", "ncclProxyCallBlockingUDS call to tpRank 1(53b1e2c1) failed : 2",
# "ncclProxyClientGetFd call to tpRank 1 handle 0x7f8 failed : 2" (also QueryFdBlocking, ConvertFd). UDS
# names the ones the socket layer's words would read first (nccl_errors reads it before them). Its name-too-
# long checks ("UDS: Cannot bind provided name to socket. Name too large") are NCCL's own and stay out.
UDS = lazy_re.compile(
    r"UDS: (?:(?:Receiving|Sending) data over socket|Socket creation error|Binding to socket)|"
    r"ncclProxy(?:CallBlockingUDS|Client(?:GetFd|QueryFdBlocking|ConvertFd)) call to"
)
# Details that name their cause whichever ncclResult_t carried them (WARN texts of NCCL 2.4-2.28):
# - two ranks on one GPU in NCCL 2.28's words (init.cc "Multiple Ranks are using the same GPU/Partition.
#   Set NCCL_MULTI_RANK_GPU_ENABLE=1 ...", transport/nvls.cc "... communicator has multiple ranks using
#   the same NVML device. This is not compatible with NCCL_NVLS_ENABLE=1"): RUN193;
# - libraries of two NCCL versions (init.cc "Mismatched NCCL version detected : rank 0 version 22105 rank 3
#   version 21903", dev_runtime.cc "NCCL library is too old. This application was compiled with NCCL
#   version 2.28.3, but is running with NCCL library version 2.27.5", "... is not backwards compatible",
#   devcomm's "The application was compiled with too old version of NCCL"): RUN195;
# - CUDA graph capture of NCCL on a driver below R465 (enqueue.cc / misc/strongstream.cc 2.9-2.28: "The
#   installed CUDA driver is older than the minimum version (R465) required for NCCL's CUDA Graphs
#   support", "NCCL cannot be captured in a graph if either it wasn't built with CUDA runtime >= 11.3 or if
#   the installed CUDA driver < R465"): the driver (RUN261);
# - no network plugin at all (plugin/net.cc 2.19+ "Failed to initialize any NET plugin", "Error: network
#   IB not found." when NCCL_NET names a transport that is not there; 2.3-2.4 transport/net.cc "Error :
#   Network returned 0 device", the NET/Socket fallback found no interface either): the platform (RUN294);
# - the topology XML NCCL was given (NCCL_TOPO_FILE / NCCL_GRAPH_FILE, or the file a cloud's network
#   plugin supplies for the instance type) that graph/xml.cc / xml.h cannot use: "XML Parse error :
#   unterminated comment", "XML Mismatch : system / gpu", "XML Topology has wrong version 1, 2 needed",
#   "Attribute arch of node cpu not found" (xml.cc's getXmlFromCpu always writes arch, vendor, familyid
#   and modelid on the cpu nodes NCCL detects itself, so only a supplied file lacks them: p5 topology
#   files of an old aws-ofi-nccl), "Could not open XML topology file": the platform's file (RUN302);
#   "Attribute busid of node nic not found" (a NIC a plugin reports without a PCI path) stays internal;
# - NCCL's own consistency checks (internal errors, not the caller's): init.cc "Failed to determine local
#   ranks rank 3 hostHash ...", "Group creation failed", "P2p schedule creation has bugs", graph/*.cc's
#   "Internal error : tree already has 2 children", "Failed to find reverse path from remNode ..",
#   "No path computed to go from GPU/0 to NET/1", "Could not find NET with id 3", "ncclTopo.. could not
#   find rank 3", transport.cc "No transport found !", misc/rings.cc "Error : Could not find transport to
#   connect next group", enqueue.cc "Unknown pattern 7", "Unknown collective 9", "Sendrecv plan not
#   aligned for self", p2p.cc "Internal error : NVswitch links mismatch", "Recursive P2P computation
#   cannot work for >8 GPUs", 2.12+'s "No transport found for rank 0[1000] -> rank 1[2000]" and "Unknown
#   pattern for collective 3 algorithm 4": RUN192;
# - the host allocations behind ncclSystemError: "Failed to malloc 4294967296 bytes" (include/core.h 2.3,
#   include/alloc.h since), "malloc of N bytes failed" (transport/p2p.cc 2.3-2.4), "Bootstrap thread : failed
#   to allocate memory": RUN171.
DETAIL_TABLE: tuple[tuple[re.Pattern[str], Any, str, str], ...] = (
    (
        lazy_re.compile(
            r"XML Parse(?: error)? : |XML Mismatch : |XML (?:Topology|Graph) has wrong version|"
            r"Attribute (?:arch|vendor|familyid|modelid) of node cpu not found|"
            r"Could not open XML (?:topology|graph) file|"
            r"system node not found in XML|XML Import Channel : dev -?\d+ not found"
        ),
        C.NCCL_TOPOLOGY_FILE,
        "NCCL could not use its topology XML (NCCL_TOPO_FILE / NCCL_GRAPH_FILE, or the file the "
        "network plugin supplies for this instance type)",
        "topology_file",
    ),
    (
        lazy_re.compile(r"Multiple Ranks are using the same GPU|multiple ranks using the same NVML device"),
        C.NCCL_DUPLICATE_GPU,
        "two ranks of one communicator use the same GPU",
        "duplicate_gpu",
    ),
    (
        lazy_re.compile(
            r"Mismatched NCCL version detected|NCCL library is (?:too old|not backwards compatible)|"
            r"compiled with too old version of NCCL"
        ),
        C.NCCL_VERSION,
        "the ranks or the program and the library use different NCCL versions",
        "version",
    ),
    (
        lazy_re.compile(
            r"minimum version \(R465\) required for NCCL's CUDA Graphs|installed CUDA driver < R465"
        ),
        C.DRIVER_TOO_OLD,
        "the NVIDIA driver is too old for NCCL inside a captured CUDA graph",
        "graph_driver",
    ),
    (
        lazy_re.compile(
            r"Failed to initialize any NET plugin|Error: network \S+ not found|Network returned 0 device"
        ),
        C.NCCL_NET_PROVIDER_MISSING,
        "NCCL found no usable network transport (NCCL_NET, the plugin or its provider)",
        "net_plugin",
    ),
    (
        lazy_re.compile(
            r"Failed to determine (?:local|intra(?: proc| node)?) ranks|Group creation failed|"
            r"P2p schedule creation has bugs|Internal error : |Failed to find reverse path|"
            r"No path computed to go from|Could not find NET with id|ncclTopo\w+ could not find|"
            r"No transport found !|Could not find transport to connect next group|"
            r"Attribute \w+ of node \w+ not found|"
            r"Unknown (?:pattern|collnet pattern|collective) -?\d|Unknown pattern for collective|"
            r"No transport found for rank|Sendrecv (?:plan|schedule) not aligned|"
            r"Recursive P2P computation cannot work"
        ),
        C.NCCL_INTERNAL_ERROR,
        "NCCL's own consistency check failed (an internal error)",
        "internal",
    ),
    (
        UDS,
        C.NCCL_PROXY_UDS_FAILED,
        "NCCL's proxy could not pass a CUDA memory handle to a local peer over its Unix domain socket: the "
        "node's ranks run in different network namespaces (containers), or the peer died; "
        "NCCL_CUMEM_ENABLE=0 avoids it",
        "proxy_uds",
    ),
    (
        lazy_re.compile(
            r"Failed to malloc \d+ bytes|malloc of \d+ bytes failed|"
            r"Bootstrap thread : failed to allocate memory"
        ),
        C.NCCL_SYSTEM_ERROR,
        "a host memory allocation inside NCCL failed (the host is out of memory, or a ulimit caps the "
        "process)",
        "host_malloc",
    ),
)

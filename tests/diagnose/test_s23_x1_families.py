"""x1 of 2026-12-07 (second round): driver_env messages of real public threads that the rules missed, each
read as its family (the program that prints it, across versions and wrappers). Variants not seen in a thread
are marked "variant".

- A PyTorch without torch.distributed (USE_DISTRIBUTED=0: macOS wheels before 1.12, Windows before 1.7, Jetson
  and other aarch64 community builds): torch/distributed/__init__.py exports the c10d names only under
  is_available(), so "ImportError: cannot import name 'ProcessGroup' from 'torch.distributed' (...)" and
  "module 'torch.distributed' has no attribute 'ReduceOp'" name the build (RUN263, rules/device_visibility.py,
  beside its "has no attribute 'init_process_group'"). Names added by later releases (DeviceMesh,
  _all_gather_base), a subpackage not imported ('checkpoint') and other modules ('torch.distributed.fsdp')
  stay silent. A backend's class re-exported by torch.distributed ("cannot import name 'ProcessGroupNCCL'
  from 'torch.distributed'", a wheel without NCCL) is RUN334 like the same name from
  torch._C._distributed_c10d (rules/env_families.py); internal classes (ProcessGroupWrapper) stay silent.
- JAX's backend set-up in its raised 0.4.31+ spelling (jax/_src/xla_bridge.py): "RuntimeError: Backend 'cuda'
  failed to initialize: Unable to use CUDA because of the following issues with CUDA components:" with one
  line per component ("Outdated cuDNN installation found."). Read like the "Unable to initialize backend
  'cuda':" row (rules/driver_env.py): a version found older than the build RUN296, else RUN262. 0.4.x's
  WARNING "CUDA backend failed to initialize: ..." stays silent: JAX goes on on the CPU, and CPU-only runs
  with a CUDA plugin installed print it (the healthy lines of test_driver_env_families3). The INFO lines for
  backends JAX merely probes ('tpu', 'rocm' on a CUDA host), other backends' words ("TPU backend", "Mosaic")
  and the message quoted in code stay silent.
"""

from __future__ import annotations

import pytest

from tests.helpers.diagnose_root import LAUNCHER_PREFIXES, check_root, prefixed, root_finding

# (log, code)
FAILURES = [
    # https://github.com/pytorch/pytorch/issues/83271 (macOS, torch 1.12.1)
    (
        "ImportError: cannot import name 'ProcessGroup' from 'torch.distributed' "
        "(/Users/me/miniforge3/envs/torch-bug/lib/python3.9/site-packages/torch/distributed/__init__.py)",
        "RUN263",
    ),
    # https://github.com/pytorch/pytorch/issues/102596 (the thread's title, Jetson NX)
    ("Jetson NX with torch 1.12.0 :cannot import name 'ProcessGroup' from 'torch.distributed'.", "RUN263"),
    # https://github.com/open-mmlab/mmengine/issues/699 (Windows, torch 1.6)
    ("cannot import name 'ProcessGroup' from 'torch.distributed'", "RUN263"),
    # variants: other names of the same export, Windows paths, the attribute spelling
    (
        "ImportError: cannot import name 'ReduceOp' from 'torch.distributed' "
        "(C:\\Users\\me\\anaconda3\\lib\\site-packages\\torch\\distributed\\__init__.py)",
        "RUN263",
    ),
    ("AttributeError: module 'torch.distributed' has no attribute 'ReduceOp'", "RUN263"),
    ("AttributeError: module 'torch.distributed' has no attribute 'new_group'", "RUN263"),
    ("ImportError: cannot import name 'TCPStore' from 'torch.distributed'", "RUN263"),
    # variants: a backend's class through torch.distributed (a wheel without it)
    (
        "ImportError: cannot import name 'ProcessGroupNCCL' from 'torch.distributed' "
        "(C:\\Python310\\lib\\site-packages\\torch\\distributed\\__init__.py)",
        "RUN334",
    ),
    (
        "ImportError: cannot import name 'ProcessGroupNCCL' from 'torch.distributed.distributed_c10d' "
        "(/opt/torch/distributed/distributed_c10d.py)",
        "RUN334",
    ),
    # https://github.com/rgommers/pixi-dev-scipystack/issues/1 (jax 0.4.31+, pytest's "E   " prefix)
    (
        "E   RuntimeError: Backend 'cuda' failed to initialize: Unable to use CUDA because of the following "
        "issues with CUDA components:\n"
        "E   Outdated cuDNN installation found.\n"
        "E   Version JAX was built against: 8907\n"
        "E   Minimum supported: 9100\n"
        "E   Installed version: 8907\n"
        "E   The local installation version must be no lower than 9100.. Available backends are ['cpu']",
        "RUN296",
    ),
    # variants: ROCm, the raised form with no device
    (
        "RuntimeError: Backend 'rocm' failed to initialize: INTERNAL: no supported devices found for "
        "platform ROCM. Available backends are ['cpu']",
        "RUN262",
    ),
    (
        "RuntimeError: Backend 'cuda' failed to initialize: FAILED_PRECONDITION: No visible GPU devices.. "
        "Available backends are ['cpu']",
        "RUN262",
    ),
]

GPU_BUILDS = [
    # https://github.com/horovod/horovod/issues/4051 (the thread's title)
    (
        "Horovod build with GPU support was requested but this PyTorch installation does not support CUDA.",
        "pytorch",
    ),
    # variants: setup.py's raise (0.13-0.19, MXNet), BytePS's copy, CMake's wrapped FATAL_ERROR
    (
        "distutils.errors.DistutilsPlatformError: Horovod build with GPU support was requested, but this "
        "MXNet installation does not support CUDA.",
        "mxnet",
    ),
    (
        "BytePS build with GPU support was requested, but this TensorFlow installation does not support "
        "CUDA.",
        "tensorflow",
    ),
    (
        "  CMake Error at horovod/torch/CMakeLists.txt:21 (message):\n"
        "    Horovod build with GPU support was requested but this\n"
        "    PyTorch installation does not support CUDA.",
        "pytorch",
    ),
]

SILENT = [
    "INFO: Above error indicates that this PyTorch installation does not support CUDA.",
    "WARNING: You requested '--device cuda', but your PyTorch installation does not support CUDA.",
    "If you see an error saying that your PyTorch installation does not support CUDA, reinstall it",
    "Horovod build with GPU support was requested but this is fine",
    "from torch.distributed import ProcessGroup, ReduceOp",
    "ImportError: cannot import name 'DeviceMesh' from 'torch.distributed' (/x/torch/distributed/a.py)",
    "AttributeError: module 'torch.distributed' has no attribute 'checkpoint'",
    "AttributeError: module 'torch.distributed' has no attribute '_all_gather_base'",
    "ImportError: cannot import name 'ProcessGroup' from 'torch.distributed.fsdp' (/x/fsdp/x.py)",
    "ImportError: cannot import name 'ProcessGroupWrapper' from 'torch.distributed'",
    "ImportError: cannot import name 'ProcessGroupish' from 'torch.distributed'",
    "I0105 14:05:05.750318 140453630969664 xla_bridge.py:660] Unable to initialize backend 'rocm': "
    'NOT_FOUND: Could not find registered platform with name: "rocm". Available platform names are: CUDA',
    "Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open",
    "TPU backend failed to initialize: something",
    "Mosaic backend failed to initialize: whatever",
    'logger.warning("CUDA backend failed to initialize: %s", err)',
    # JAX 0.4.x's WARNING: it goes on on the CPU, and CPU-only runs with a CUDA plugin print it too (the
    # healthy lines of test_driver_env_families3); real lines of gcbfplus#1, RFdiffusion#208, mt3#145
    "CUDA backend failed to initialize: Found cuDNN version 8600, but JAX was built against version 8906, "
    "which is newer. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    "WARNING:jax._src.xla_bridge:CUDA backend failed to initialize: Unable to load CUDA. "
    "(Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    "Why does 'CUDA backend failed to initialize' show on my laptop?",
]


@pytest.mark.parametrize(("log", "code"), FAILURES)
def test_each_variant_names_its_cause(log: str, code: str) -> None:
    root = root_finding(log + "\n")
    assert root is not None and root.code == code and root.category == "driver_env", (log, root)


@pytest.mark.parametrize("line", SILENT)
def test_near_misses_stay_silent(line: str) -> None:
    assert root_finding(line + "\n") is None, line


@pytest.mark.parametrize("prefix", LAUNCHER_PREFIXES)
def test_torch_without_distributed_behind_every_prefix(prefix: str) -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    from torch.distributed import ProcessGroup\n"
        "ImportError: cannot import name 'ProcessGroup' from 'torch.distributed' "
        "(/opt/conda/lib/python3.8/site-packages/torch/distributed/__init__.py)"
    )
    check_root(prefixed(prefix, log), "RUN263")


@pytest.mark.parametrize(("log", "framework"), GPU_BUILDS)
def test_gpu_ops_asked_of_a_cpu_framework(log: str, framework: str) -> None:
    check_root(
        log.replace("\\n", "\n") + "\n",
        "RUN262",
        {"framework": framework, "reason": "cpu_build_of_framework"},
    )

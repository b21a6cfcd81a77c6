"""Record real torchrun output (torch on this machine, gloo, 2 ranks) for the diagnose corpus:

    python -m tests.helpers.make_real_torchrun_logs

Writes tests/fixtures/logs/torchrun_real_{exception,sigkill,segfault,hang}.log: the combined
stdout/stderr of `python -m torch.distributed.run --nproc-per-node 2 tests/helpers/torchrun_child.py MODE`,
i.e. the `[rankN]:` prefixed child output, the agent's glog lines and the ChildFailedError table
exactly as this torch version prints them.
"""

from __future__ import annotations

import os
import sys

from pgdoctor.probes.processes import free_port, run_children

HERE = os.path.dirname(os.path.abspath(__file__))


def main() -> None:
    modes = ("exception", "sigkill", "segfault", "hang")
    argvs = [
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc-per-node",
            "2",
            "--master-port",
            str(free_port()),
            os.path.join(HERE, "torchrun_child.py"),
            m,
        ]
        for m in modes
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TORCH_", "NCCL_", "MASTER_"))}
    for mode, argv in zip(modes, argvs):
        (out,) = run_children([argv], [env], 90)
        with open(os.path.join(HERE, "fixtures", "logs", f"torchrun_real_{mode}.log"), "w") as fh:
            fh.write(out.stdout + out.stderr)


if __name__ == "__main__":
    main()

"""The `sitecustomize.py` shim `pgdoctor run` writes into a private directory put first on the
job's PYTHONPATH: at every interpreter start of the job it calls pgdoctor.trace.autostart (a rank
starts its live socket), then runs the sitecustomize it shadows. The directory goes with the
run's private directory when the run ends."""

from __future__ import annotations

import os

# Self-contained: it must import in any Python the job uses, and run the shadowed sitecustomize
# whatever happens to pgdoctor's import.
SHIM = '''"""Written by `pgdoctor run` (pgdoctor.trace.autostart): start this rank's live socket for
`pgdoctor hang`, then run the sitecustomize this file shadows. Removed when the run ends."""


def _pgdoctor_live():
    import os
    import sys

    if os.environ.get("PGDOCTOR_LIVE") != "1":
        return
    try:
        from pgdoctor.trace import autostart
    except Exception:  # another Python, without pgdoctor: the job runs as before
        return
    autostart.start_if_rank()


def _pgdoctor_chain():
    import importlib.machinery
    import importlib.util
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or os.curdir) != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules["sitecustomize"] = module
    spec.loader.exec_module(module)


_pgdoctor_live()
_pgdoctor_chain()
'''


def install(directory: str) -> str:
    """Write the shim into `directory` (created 0700); the directory to put first on PYTHONPATH."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w", encoding="utf-8") as fh:
        fh.write(SHIM)
    return directory

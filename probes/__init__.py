"""The only code that touches the system. Importing a submodule registers its probes; no
submodule imports torch or pynvml at import time."""

from __future__ import annotations

from pgdoctor.model.discover import import_submodules


def load_all() -> None:
    import_submodules(__name__, __path__)

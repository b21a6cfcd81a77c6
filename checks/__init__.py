"""Pure rules: Snapshot -> Findings. Importing a submodule registers its codes and checks."""

from __future__ import annotations

from pgdoctor.model.discover import import_submodules


def load_all() -> None:
    """Import every check module once, so CODES, CONFIG_KEYS and CHECKS are complete."""
    import_submodules(__name__, __path__)

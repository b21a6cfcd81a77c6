"""Where the test tree is: one source for the paths tests and helpers share."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
FIXTURES = TESTS / "fixtures"
HELPERS = TESTS / "helpers"
# The shared data (real corpora, real GPU traces) lies beside the clone, never inside it.
SHARED = ROOT.parent / "shared"

"""The findings of one released corpus log, diagnosed once per test process.

Several tests diagnose the same released logs with the catalogue as shipped: test_corpus's scores and
its decoy and facts checks, the gated half of test_diagnose_gates, the plain half of test_paste_shapes.
diagnose_sources is a function of (name, text) alone, so each worker answers each of those logs once
(about 1 CPU-minute of the suite's in-process work was the same logs diagnosed again). Those modules
share one xdist group (CORPUS_GROUP), so that they run on the worker that holds the answers. A test
that changes the rules (the gates test's open gates) calls diagnose_sources itself, never this.
"""

from __future__ import annotations

import functools

from pgdoctor.diagnose.api import diagnose_sources
from pgdoctor.model import Finding

CORPUS_GROUP = "corpus_answers"


@functools.cache
def diagnosed(name: str, text: str) -> tuple[Finding, ...]:
    """diagnose_sources([(name, text)]), as a tuple (shared between callers: do not change it)."""
    return tuple(diagnose_sources([(name, text)]))

"""A message reads the same with or without the exception type before it.

Real material often drops the type: a thread's title quotes torch's sentence alone ("Expected to have
finished reduction in the prior iteration before starting a new one"), Ray and other wrappers print the
type on one line and the message on the next, a paste starts mid-line. A row whose only anchor was the
'rror' of 'RuntimeError: ' then found nothing. Every row whose examples start with an exception type is
checked here: each example, its type cut off, must reach the same root finding as with it (the row's
code, where the typed line alone is read as that), unless NEEDS_ITS_TYPE names the row (or one of its
examples as "row: message") with the reason its message alone says too little.
"""

from __future__ import annotations

import re
from typing import Optional

import pytest

from pgdoctor.diagnose import rules
from pgdoctor.diagnose.signature import Signature
from tests.helpers.diagnose_root import root_finding

# The exception type before a message, as the measuring probe cut it ("RuntimeError: ",
# "torch.distributed.DistNetworkError: ", "ncclSystemError: ").
TYPE = re.compile(r"^\s*(?:\w+\.)*\w*(?:Error|Exception):\s*")

# (vocabulary.py: the net under the families reads an error line by its root-cause words only when the line
# also says that it failed, as the exception type does)
_WORD_NET = "the word net reads a line only when it says it failed: the exception type says it"
NEEDS_ITS_TYPE = {
    "address in use": "'Address already in use' is any socket's errno text; healthy services log it, retry",
    "launcher variable missing": "the KeyError is the message: without it \"'RANK'\" is a quoted word",
    "store connection dropped": "TCPStore's server logs 'Failed to recv, got 0 bytes' for every client "
    "that hangs up, in a healthy run too: only the raised exception is the failure",
    "nccl binding never loaded": "'name ... is not defined' is Python's NameError wording for any name",
    "cascade marker": "'Process 12 got signal: 15' is torchrun's marker only as a SignalException",
    "nccl backend without a gpu: ProcessGroupNCCL is": "a paste cut inside the message is read only where "
    "an exception type starts the cut line",
    "words: launch setting missing": _WORD_NET,
    "words: communicator used before init": _WORD_NET,
    "words: refused call": _WORD_NET,
}

TYPED = [
    (mod.__name__.rsplit(".", 1)[1], row, ex)
    for mod in rules.MODULES
    for row in mod.SIGNATURES
    for ex in row.examples
    if TYPE.match(ex)
]


def _code(log: str) -> Optional[str]:
    root = root_finding(log)
    return root.code if root else None


def _listed(row: Signature, bare: str) -> bool:
    return row.name in NEEDS_ITS_TYPE or f"{row.name}: {bare}" in NEEDS_ITS_TYPE


# The listed rows are not run here (a skip would count as a test): the test below keeps the list exact.
READ_BARE = [(m, row, ex) for m, row, ex in TYPED if not _listed(row, TYPE.sub("", ex, count=1))]


@pytest.mark.parametrize(
    ("module", "row", "example"), READ_BARE, ids=[f"{m}:{r.name}:{ex[:40]}" for m, r, ex in READ_BARE]
)
def test_a_message_without_its_type_reaches_the_same_root(module: str, row: Signature, example: str) -> None:
    bare = TYPE.sub("", example, count=1)
    typed = _code(example)
    got = _code(bare)
    if typed == row.code:
        assert got == row.code, f"{module}:{row.name}: {bare!r} -> {got}, with its type {row.code}"
    else:  # the typed line alone is not the row's root either (it needs its context): no new answer
        assert got == typed, f"{module}:{row.name}: {bare!r} -> {got}, with its type {typed}"


def test_every_row_listed_as_needing_its_type_does() -> None:
    """The list stays exact: each entry names a row (or one of its examples) that has typed examples,
    and at least one of them loses its root finding without the type."""
    for key in NEEDS_ITS_TYPE:
        cases = [
            (row, ex, TYPE.sub("", ex, count=1))
            for _, row, ex in TYPED
            if key in (row.name, f"{row.name}: {TYPE.sub('', ex, count=1)}")
        ]
        assert cases, f"{key!r} names no row with an example that starts with an exception type"
        assert any(_code(bare) != _code(ex) for _, ex, bare in cases), (
            f"{key!r} reads the same without its type"
        )

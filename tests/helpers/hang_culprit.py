"""Code of a test job's culprit rank, in a module of its own (the verdict must name this file)."""

import time


def nap(seconds: float) -> None:
    time.sleep(seconds)  # the culprit's frame: hang_culprit.py:7


class SlowData:
    """A dataset whose item never comes: the DataLoader worker sleeps here."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int) -> int:
        time.sleep(self.seconds)  # the worker's frame: hang_culprit.py:20
        return i

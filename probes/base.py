"""Probe registration and the context a probe runs in.

A probe is the only kind of code that touches the system. It receives a ProbeContext whose
seams (environment, file-system root, command runner, clock) tests replace, and returns
measurements. To say "this cannot be measured here" it raises ProbeUnavailable with a Reason.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from pgdoctor.model import Measurement, Reason
from pgdoctor.probes.commands import CommandRunner, SubprocessRunner
from pgdoctor.probes.sysfs import FsReader

LEVELS = ("quick", "standard", "full")


def level_rank(level: str) -> int:
    return LEVELS.index(level)


class ProbeUnavailable(Exception):
    """Raised by a probe when what it measures does not exist or cannot be read here."""

    def __init__(self, reason: Reason, detail: str = ""):
        super().__init__(f"{reason.value}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass
class ProbeContext:
    env: Mapping[str, str]
    fs: FsReader = field(default_factory=FsReader)
    commands: CommandRunner = field(default_factory=SubprocessRunner)
    clock: Callable[[], float] = time.time
    level: str = "standard"
    # CLI options that probes read (expect_gpus, force, nproc, backend, ...), by name.
    options: Mapping[str, Any] = field(default_factory=dict)
    # The validated config (pgdoctor.checks.base.Config); probes read only thresholds that
    # decide what to measure (windows, sizes), never what is good or bad.
    config: Mapping[str, Any] = field(default_factory=dict)
    # Measured by earlier probes in the same run, for probes that depend on others.
    previous: Sequence[Measurement] = ()


ProbeFn = Callable[[ProbeContext], list[Measurement]]


@dataclass(frozen=True)
class ProbeSpec:
    name: str
    area: str
    level: str  # lowest level at which it runs
    timeout_s: float
    fn: ProbeFn
    after: tuple[str, ...] = ()  # probes whose measurements this one reads (ctx.previous)


PROBES: dict[str, ProbeSpec] = {}


def probe(
    name: str, area: str, level: str = "quick", timeout_s: float = 5.0, after: Sequence[str] = ()
) -> Callable[[ProbeFn], ProbeFn]:
    if level not in LEVELS:
        raise ValueError(f"unknown level {level}")

    def deco(fn: ProbeFn) -> ProbeFn:
        if name in PROBES:
            raise ValueError(f"probe registered twice: {name}")
        PROBES[name] = ProbeSpec(name, area, level, timeout_s, fn, tuple(after))
        return fn

    return deco


def find(previous: Sequence[Measurement], key: str) -> Optional[Measurement]:
    for m in previous:
        if m.key == key:
            return m
    return None

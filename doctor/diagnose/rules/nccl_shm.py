"""NCCL's shared-memory segments (the SHM transport between the GPUs of one node, the proxy's op pools): the
failure to create or map one, across NCCL's versions, read by the errno it names (RUN171, nccl_network).

Read at the source (NVIDIA/nccl, every v2.x tag):
- 2.3 (src/include/shm.h shmOpen): "shm_open failed to open %s : %s", "Unable to allocate shared memory (%d
  bytes) : %s" (posix_fallocate's result), "failure in mmap of %s (size %d) : %s"; printed by WARN ("NCCL
  WARN" from 2.4 on, "host:pid:tid [dev] WARN" before), or quoted without its prefix in prose.
- 2.4-2.11 (include/shm.h): SYSCHECK's "Call to posix_fallocate failed : No space left on device" (also
  shm_open, mmap) and then "Error while creating shared memory segment %s (size %d)" ("attaching to").
- 2.12-2.22 (misc/shmutils.cc): "Error: failed to extend %s to %d bytes" (ftruncate), "Could not map %s"
  (2.19: "Could not map %s size %zi, error: %s"), "Error while %s shared memory segment %s (size %ld)".
- 2.23+ (misc/shmutils.cc): "Error: failed to create shared memory file %p, error %s (%d)", "Error: failed to
  extend %s to %ld bytes, error: %s (%d)", "Error: Could not map %s size %zu, error: %s (%d)", "Error while
  %s shared memory segment %s (size %ld), error: %s (%d)".
The cause is the errno (strerror) the line names: ENOSPC /dev/shm too small (a container's 64 MB default:
--shm-size / --ipc=host); EINTR a signal (a profiler's SIGPROF timer) interrupted posix_fallocate, which NCCL
before 2.4 did not retry (NVIDIA/nccl#137); ENOMEM the host's memory or a memlock / mmap limit; EACCES / EPERM
/ EROFS /dev/shm not writable for the job's user (a read-only or foreign mount); ENOENT no /dev/shm mounted;
EMFILE the open-file limit. Without an errno (2.4-2.22) the common cause, /dev/shm too small, is said.
Silent: the teardown's "munmap of shared memory failed", "[Service thread] shm close failed" (cleanup noise).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from pgdoctor.checks.codes import run as C
from pgdoctor.diagnose.event import Event, Hit, event
from pgdoctor.diagnose.signature import Signature, gated_reader
from pgdoctor.knowledge.clip import clip
from pgdoctor.model import lazy_re

# A last error / WARN text of the family (what NCCL wrapped in its system error), whatever the version.
SHM = lazy_re.compile(
    r"shared memory segment|/dev/shm/|shm_open|posix_fallocate|ftruncate|"
    r"Unable to allocate shared memory \(\d+ bytes\)|failure in mmap of \S+ \(size|"
    r"failed to create shared memory file",
    re.I,
)
# The same texts quoted without NCCL's WARN prefix (2.3's and 2.23's; 2.4-2.22's "Error while creating shared
# memory segment" has the same row): prose, a bare "WARN <msg>" with the prefix cut off.
_QUOTED = lazy_re.compile(
    r"Unable to allocate shared memory \((?P<size>\d+) bytes\) : (?P<err>[A-Z][\w ]+)|"
    r"failure in mmap of (?P<seg>\S+) \(size (?P<size2>\d+)\) : (?P<err2>[A-Z][\w ]+)|"
    r"failed to create shared memory file \S+, error (?P<err3>[A-Z][\w ]+?) \(\d+\)|"
    r"Error while (?P<what>creating|attaching to) shared memory segment (?P<seg4>\S+) \(size (?P<size4>\d+)\)"
)
# strerror() texts -> (likely_cause, what to do).
_ERRNO = (
    (
        "No space left on device",
        "shared_memory",
        "/dev/shm is full or too small (a container without --shm-size or --ipc=host; the 64 MB default)",
    ),
    (
        "Interrupted system call",
        "interrupted_system_call",
        "a signal (a profiler's SIGPROF timer) interrupted "
        "posix_fallocate and NCCL < 2.4 does not retry it: upgrade NCCL, or block the signal around "
        "ncclCommInitRank",
    ),
    (
        "Cannot allocate memory",
        "host_memory",
        "the host's memory, or a memlock / mmap limit, refused the "
        "mapping (ulimit -l, the container's memory limit)",
    ),
    (
        "Permission denied",
        "shm_permissions",
        "/dev/shm is not writable for the job's user (a read-only or "
        "foreign mount, a stale segment of another user)",
    ),
    ("Operation not permitted", "shm_permissions", "/dev/shm is not writable for the job's user"),
    ("Read-only file system", "shm_permissions", "/dev/shm is mounted read-only"),
    (
        "No such file or directory",
        "no_dev_shm",
        "no /dev/shm is mounted where the job runs (a sandbox or container without it)",
    ),
    ("Too many open files", "open_file_limit", "the process reached its open-file limit (ulimit -n)"),
)
_DEFAULT = ("shared_memory", "/dev/shm too small (a container without --shm-size or --ipc=host)")


def shm_cause(text: str) -> tuple[str, str]:
    """(likely_cause, what it means) for a line of the family, by the errno text it names."""
    for said, cause, why in _ERRNO:
        if said in text:
            return cause, why
    return _DEFAULT


def shm_event(hit: Hit, detail: str, base: dict[str, Any], used: Any) -> list[Event]:
    """NCCL's last error / WARN of the family, as nccl_detail's readers hand it over."""
    cause, why = shm_cause(detail)
    return [
        event(
            hit,
            C.NCCL_SYSTEM_ERROR.code,
            f"{hit.who()}: NCCL could not create or map its shared memory segment ({why})",
            {**base, "nccl_last_error": detail[:300], "likely_cause": cause},
            used,
            dedupe=(C.NCCL_SYSTEM_ERROR.code, "shm"),
        )
    ]


def _quoted(row: Signature, hit: Hit, m: re.Match[str]) -> Optional[list[Event]]:
    text = hit.text.strip()
    cause, why = shm_cause(text)
    facts: dict[str, Any] = {"likely_cause": cause, "nccl_last_error": clip(text, 300)}
    seg = m.group("seg") or m.group("seg4")
    size = m.group("size") or m.group("size2") or m.group("size4")
    if seg:
        facts["segment"] = seg
    if size:
        facts["bytes"] = int(size)
    verb = {"attaching to": "attach to", "creating": "create"}.get(m.group("what") or "", "create or map")
    msg = f"{hit.who()}: NCCL could not {verb} its shared memory segment{f' {seg}' if seg else ''} ({why})"
    return [row.event(hit, msg, facts, dedupe=(row.code, "shm"))]


SIGNATURES = (
    Signature(
        "nccl shared memory segment",
        _QUOTED,
        _quoted,
        C.NCCL_SYSTEM_ERROR.code,
        anchors=(
            b"shared memory segment",
            b"Unable to allocate shared memory (",
            b"failure in mmap of",
            b"failed to create shared memory file",
        ),
        words=(
            "shared memory segment",
            "unable to allocate shared memory (",
            "failure in mmap of",
            "failed to create shared memory file",
        ),
    ),
)

parse = gated_reader(SIGNATURES)

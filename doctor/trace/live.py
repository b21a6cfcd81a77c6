"""The cooperative tier of `pgdoctor hang`: a private per-rank Unix socket that answers, to a
process of the same uid, with this rank's Python stacks, its open `pgdoctor.range` ranges and
torch's flight recorder. `hang` reads it without ptrace (Yama, containers without
CAP_SYS_PTRACE, gVisor). Opt in with one line in the training script:

    pgdoctor.live()          # or pgdoctor.instrument(model, optimizer), which starts it too

The socket is `<dir>/<pid>.sock` in a directory of mode 0700 owned by this uid: PGDOCTOR_LIVE_DIR
(set by `pgdoctor run`), else /tmp/pgdoctor-live-<uid>. Never TCP. PGDOCTOR_LIVE=0 turns it off.
A daemon thread answers each connection with one JSON object and closes it; it costs nothing
until asked, and the file is removed at exit. Imports nothing of pgdoctor's outside trace/.

A client may send one request line first: `progress` gets the small answer `pgdoctor run` polls
every second (pid, the `pgdoctor.step` counter and the collectives issued over all process
groups, microseconds to build); anything else, or nothing within REQUEST_WAIT_S, the whole answer (its
flight recorder alone takes 50-90 ms for 2000 entries).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import stat
import sys
import threading
import time
from typing import Any, Callable, Optional

_started: Optional[str] = None
_lock = threading.Lock()
_steps = [0, 0.0]  # the last pgdoctor.step number seen, and when
REQUEST_WAIT_S = 0.2  # how long a connection may take to say what it wants


def default_dir(uid: Optional[int] = None) -> str:
    return f"/tmp/pgdoctor-live-{os.getuid() if uid is None else uid}"


def private_dir(path: str) -> str:
    """Create `path` 0700, or accept it only when it is ours and nobody else's to read."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        raise PermissionError(
            f"{path}: not a private directory of uid {os.getuid()} (mode {oct(st.st_mode & 0o777)})"
        )
    return path


def _frames(frame: Any) -> list[dict[str, Any]]:
    out = []
    while frame is not None:
        out.append(
            {"file": frame.f_code.co_filename, "line": frame.f_lineno, "function": frame.f_code.co_name}
        )
        frame = frame.f_back
    return out  # innermost first


def _flight_recorder() -> Optional[Any]:
    """torch's flight-recorder JSON when torch.distributed is up in this process (else None)."""
    dist = _initialized_dist()
    if dist is None:
        return None
    try:
        raw = sys.modules["torch"]._C._distributed_c10d._dump_fr_trace_json()
        return json.loads(raw.decode() if isinstance(raw, bytes) else raw)
    except Exception:  # an older torch, a backend without a recorder: the tier is absent
        return None


# The open ranges of a thread: pgdoctor.trace.instrument registers its reader when imported (it
# imports this module, never the reverse); a job that never opens a range has none.
_RANGES: list[Callable[[Optional[int]], tuple[str, ...]]] = []


def set_ranges_reader(reader: Callable[[Optional[int]], tuple[str, ...]]) -> None:
    _RANGES[:] = [reader]


def _initialized_dist() -> Optional[Any]:
    """torch.distributed when the job imported it and initialised a process group, else None.
    Never imports: this runs on the socket's thread, and an import there while the main thread
    is still importing torch (the socket of `pgdoctor run`'s shim starts before the script)
    breaks the job's own import ("'torch._C' is not a package")."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is None or "torch.distributed.distributed_c10d" not in sys.modules:
            return None
        return dist if dist.is_available() and dist.is_initialized() else None
    except Exception:  # a module still half-imported: not yet
        return None


def collective_seq() -> Optional[int]:
    """How many collectives this rank has issued, over all its process groups (None before
    init_process_group): it grows with every step that communicates, on the default group or on
    subgroups only (FSDP, tensor or pipeline parallel groups), whether or not the job calls
    pgdoctor.step, and stays put while the rank waits in (or spins on) one collective."""
    dist = _initialized_dist()
    if dist is None:
        return None
    c10d = dist.distributed_c10d
    try:
        groups = list(c10d._world.pg_map) or [c10d._get_default_group()]
        return sum(int(pg._get_sequence_number_for_group()) for pg in groups)
    except Exception:  # an older torch, a backend without sequence numbers: no figure
        try:
            return int(c10d._get_default_group()._get_sequence_number_for_group())
        except Exception:
            return None


def group_ranks() -> dict[str, list[int]]:
    """Each process group's global ranks, by the name its flight-recorder entries carry
    (`process_group[0]`): which ranks a collective on a subgroup waits for."""
    dist = _initialized_dist()
    if dist is None:
        return {}
    world = dist.distributed_c10d._world
    try:
        return {
            str(world.pg_names[pg]): sorted(int(r) for r in world.pg_group_ranks[pg]) for pg in world.pg_map
        }
    except Exception:  # an older torch without these tables: no membership
        return {}


def progress() -> dict[str, Any]:
    return {"pid": os.getpid(), "step": _steps[0], "seq": collective_seq()}


def answer() -> dict[str, Any]:
    main = threading.main_thread()
    frames = sys._current_frames()
    me = threading.get_ident()
    names = {t.ident: t.name for t in threading.enumerate()}
    out: dict[str, Any] = {
        "pid": os.getpid(),
        "rank": os.environ.get("RANK"),
        "stack": _frames(frames.get(main.ident or 0)),
        "threads": {
            f"{names.get(i, i)}": _frames(f)[:30] for i, f in frames.items() if i not in (me, main.ident)
        },
        "ranges": list(_RANGES[0](main.ident)) if _RANGES else [],
        "step": _steps[0],
        "seq": collective_seq(),
        "step_age_s": round(time.monotonic() - _steps[1], 3) if _steps[1] else None,
    }
    fr = _flight_recorder()
    if fr is not None:
        out["flight_recorder"] = fr
        out["groups"] = group_ranks()
    return out


def note_step(n: int) -> None:
    _steps[0], _steps[1] = n, time.monotonic()


def _serve(server: socket.socket) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            try:
                conn.settimeout(REQUEST_WAIT_S)
                try:
                    request = conn.recv(64)
                except socket.timeout:
                    request = b""
                conn.settimeout(5)
                reply = progress() if request.strip() == b"progress" else answer()
                conn.sendall(json.dumps(reply, default=str).encode() + b"\n")
            except Exception:  # a reader that left, or a frame that vanished: the next one is served
                pass


def _remove_stale(base: str) -> None:
    """Sockets of ranks that were killed (SIGKILL skips atexit) do not pile up."""
    for name in os.listdir(base):
        pid = name[:-5]
        if name.endswith(".sock") and pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            try:
                os.unlink(os.path.join(base, name))
            except OSError:
                pass


def start(directory: Optional[str] = None) -> Optional[str]:
    """Start the socket (once per process); its path, or None when turned off."""
    global _started
    if os.environ.get("PGDOCTOR_LIVE", "1") == "0":
        return None
    with _lock:
        if _started is not None and os.path.exists(_started):
            return _started
        base = private_dir(directory or os.environ.get("PGDOCTOR_LIVE_DIR") or default_dir())
        _remove_stale(base)
        path = os.path.join(base, f"{os.getpid()}.sock")
        try:
            os.unlink(path)  # a dead process of the same pid left it
        except FileNotFoundError:
            pass
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(path)
        os.chmod(path, 0o600)
        server.listen(4)
        threading.Thread(target=_serve, args=(server,), name="pgdoctor-live", daemon=True).start()
        _started = path
        pid = os.getpid()

        def remove() -> None:
            if os.getpid() == pid:  # a forked DataLoader worker must not remove its rank's socket
                server.close()
                try:
                    os.unlink(path)
                except OSError:
                    pass

        atexit.register(remove)
        return path

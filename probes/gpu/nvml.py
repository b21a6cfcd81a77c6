"""All NVML access goes through one backend interface, so probes run on recordings in tests.

A backend answers `call(function, *args)` where `function` is the NVML C API name and every
argument is an int: device arguments are GPU indices (the live backend turns them into handles),
the rest are NVML enum values or link numbers. Results are plain JSON values (structs become
dicts), so a recording of a real node is a JSON file and replays byte for byte.

Three backends:
- LiveBackend: imports pynvml (nvidia-ml-py) lazily; every NVML error is translated into an
  NvmlError carrying a Reason at ONE place, `translate_error`.
- ReplayBackend: a strict fake for tests. It answers only calls it has a record for and raises
  UnrecordedCall on anything else (a permissive mock would hide a misspelled NVML call), and lets
  a test inject an error into one call.
- RecordingBackend: wraps the live one and writes what it saw as a replay fixture.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Callable, Optional, Protocol

from pgdoctor.model import Reason

# pynvml's error class suffix (NVMLError_<name>) -> Reason. Anything not listed is Reason.ERROR.
ERROR_REASONS: dict[str, Reason] = {
    "NotSupported": Reason.NOT_SUPPORTED,
    "NoPermission": Reason.NO_PERMISSION,
    "GpuIsLost": Reason.GPU_LOST,
    "LibraryNotFound": Reason.LIBRARY_NOT_FOUND,
    "DriverNotLoaded": Reason.DRIVER_NOT_LOADED,
    "FunctionNotFound": Reason.FUNCTION_NOT_FOUND,
}

FIXTURE_KIND = "pgdoctor.nvml-recording"


class NvmlError(Exception):
    """An NVML call that failed, with the Reason the rest of pgdoctor understands."""

    def __init__(self, reason: Reason, function: str, error_name: str, text: str = ""):
        self.reason = reason
        self.function = function
        self.error_name = error_name  # NVMLError_<error_name>, kept for recordings
        self.text = text or error_name
        super().__init__(f"{function}: {self.text}")

    @property
    def detail(self) -> str:
        return f"{self.function}: {self.text}"


class UnrecordedCall(LookupError):
    """The replay backend was asked something it has no record for: a test or fixture bug."""


def _busid(info: Any) -> str:
    bus = info.busId if hasattr(info, "busId") else info
    return bus.decode() if isinstance(bus, bytes) else str(bus)


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _memory(info: Any) -> dict[str, int]:
    return {"total": int(info.total), "free": int(info.free), "used": int(info.used)}


def _processes(procs: Any) -> list[dict[str, Any]]:
    return [
        {"pid": int(p.pid), "usedGpuMemory": None if p.usedGpuMemory is None else int(p.usedGpuMemory)}
        for p in procs
    ]


def _utilization(u: Any) -> dict[str, int]:
    return {"gpu": int(u.gpu), "memory": int(u.memory)}


def _process_utilization(samples: Any) -> list[dict[str, int]]:
    """nvmlProcessUtilizationSample_t per process: SM/memory/encoder/decoder % over its last sample."""
    return [
        {
            "pid": int(p.pid),
            "timeStamp": int(p.timeStamp),
            "smUtil": int(p.smUtil),
            "memUtil": int(p.memUtil),
            "encUtil": int(p.encUtil),
            "decUtil": int(p.decUtil),
        }
        for p in samples
    ]


def _ints(values: Any) -> list[int]:
    return [int(v) for v in values]


def _int(value: Any) -> int:
    return int(value)


# Every NVML function pgdoctor calls: (number of leading device arguments, result converter).
# Calls to anything else are refused by every backend, so a typo fails loudly in tests.
FUNCTIONS: dict[str, tuple[int, Callable[[Any], Any]]] = {
    "nvmlSystemGetDriverVersion": (0, _text),
    "nvmlSystemGetCudaDriverVersion": (0, _int),
    "nvmlSystemGetProcessName": (0, _text),
    "nvmlDeviceGetCount": (0, _int),
    "nvmlDeviceGetName": (1, _text),
    "nvmlDeviceGetUUID": (1, _text),
    "nvmlDeviceGetPciInfo": (1, _busid),
    "nvmlDeviceGetSerial": (1, _text),
    "nvmlDeviceGetMemoryInfo": (1, _memory),
    "nvmlDeviceGetComputeRunningProcesses": (1, _processes),
    "nvmlDeviceGetUtilizationRates": (1, _utilization),
    # (device, lastSeenTimeStamp): 0 asks for every sample NVML still holds (its last ~seconds)
    "nvmlDeviceGetProcessUtilization": (1, _process_utilization),
    "nvmlDeviceGetEccMode": (1, _ints),
    "nvmlDeviceGetTotalEccErrors": (1, _int),
    "nvmlDeviceGetRetiredPages": (1, _ints),
    "nvmlDeviceGetRetiredPagesPendingStatus": (1, _int),
    "nvmlDeviceGetRemappedRows": (1, _ints),
    "nvmlDeviceGetTemperature": (1, _int),
    "nvmlDeviceGetTemperatureThreshold": (1, _int),
    "nvmlDeviceGetPowerUsage": (1, _int),
    "nvmlDeviceGetPowerManagementLimit": (1, _int),
    "nvmlDeviceGetPowerManagementDefaultLimit": (1, _int),
    "nvmlDeviceGetEnforcedPowerLimit": (1, _int),
    "nvmlDeviceGetClockInfo": (1, _int),
    "nvmlDeviceGetMaxClockInfo": (1, _int),
    "nvmlDeviceGetCurrentClocksThrottleReasons": (1, _int),
    "nvmlDeviceGetCurrPcieLinkGeneration": (1, _int),
    "nvmlDeviceGetMaxPcieLinkGeneration": (1, _int),
    "nvmlDeviceGetCurrPcieLinkWidth": (1, _int),
    "nvmlDeviceGetMaxPcieLinkWidth": (1, _int),
    "nvmlDeviceGetPcieReplayCounter": (1, _int),
    "nvmlDeviceGetNvLinkState": (1, _int),
    "nvmlDeviceGetNvLinkVersion": (1, _int),
    "nvmlDeviceGetNvLinkRemotePciInfo": (1, _busid),
    "nvmlDeviceGetNvLinkErrorCounter": (1, _int),
    "nvmlDeviceGetPersistenceMode": (1, _int),
    "nvmlDeviceGetComputeMode": (1, _int),
    "nvmlDeviceGetMigMode": (1, _ints),
    "nvmlDeviceGetCpuAffinity": (1, _ints),
    "nvmlDeviceGetNumaNodeId": (1, _int),
    "nvmlDeviceGetTopologyCommonAncestor": (2, _int),
    "nvmlDeviceGetP2PStatus": (2, _int),
}


class NvmlBackend(Protocol):
    def init(self) -> None: ...

    def shutdown(self) -> None: ...

    def call(self, function: str, *args: int) -> Any: ...


def _known(function: str) -> tuple[int, Callable[[Any], Any]]:
    spec = FUNCTIONS.get(function)
    if spec is None:
        raise UnrecordedCall(f"{function} is not an NVML function pgdoctor knows (see FUNCTIONS)")
    return spec


def translate_error(exc: BaseException, function: str) -> NvmlError:
    """THE choke point: an exception from pynvml becomes an NvmlError with a Reason.

    pynvml raises NVMLError_<Name> subclasses; an old binding without the Python wrapper raises
    AttributeError, which means the same as a driver without the symbol: function not found."""
    if isinstance(exc, AttributeError):
        return NvmlError(Reason.FUNCTION_NOT_FOUND, function, "FunctionNotFound", "not in this pynvml")
    cls = type(exc).__name__
    name = cls[len("NVMLError_") :] if cls.startswith("NVMLError_") else cls
    try:
        text = str(exc) if cls.startswith("NVMLError") else f"{cls}: {exc}"
    except Exception:  # pynvml formats some errors by calling into the library
        text = name
    return NvmlError(ERROR_REASONS.get(name, Reason.ERROR), function, name, text)


class LiveBackend:
    """The real NVML through pynvml, imported on init() so `pgdoctor --help` never loads it."""

    def __init__(self, module: Any = None):
        self._nvml = module  # tests pass a module double to exercise translate_error
        self._handles: dict[int, Any] = {}

    def init(self) -> None:
        if self._nvml is None:
            try:
                import pynvml
            except ImportError:
                raise NvmlError(
                    Reason.LIBRARY_NOT_FOUND,
                    "import pynvml",
                    "LibraryNotFound",
                    "nvidia-ml-py (pynvml) is not installed",
                ) from None
            self._nvml = pynvml
        self._invoke("nvmlInit", lambda: self._nvml.nvmlInit())

    def shutdown(self) -> None:
        if self._nvml is not None:
            try:
                self._nvml.nvmlShutdown()
            except Exception:  # shutting down a half-initialised library must not hide the result
                pass
        self._handles.clear()

    def _invoke(self, function: str, thunk: Callable[[], Any]) -> Any:
        try:
            return thunk()
        except Exception as exc:
            # Not only NVMLError: a binding/driver mismatch can surface as TypeError or ctypes
            # errors for one field; that field is then `error` with the exception named, and the
            # other fields are still read.
            raise translate_error(exc, function) from None

    def _handle(self, index: int) -> Any:
        h = self._handles.get(index)
        if h is None:
            h = self._invoke(
                "nvmlDeviceGetHandleByIndex", lambda: self._nvml.nvmlDeviceGetHandleByIndex(index)
            )
            self._handles[index] = h
        return h

    def call(self, function: str, *args: int) -> Any:
        n_devices, convert = _known(function)
        handles = [self._handle(a) for a in args[:n_devices]]
        rest = list(args[n_devices:])
        return self._invoke(function, lambda: convert(getattr(self._nvml, function)(*handles, *rest)))


def call_key(function: str, args: tuple[int, ...]) -> str:
    return f"{function}({','.join(str(a) for a in args)})"


class ReplayBackend:
    """Strict fake: replays a recording; raises UnrecordedCall on any call it has no record for.

    A record is either a value or {"nvml_error": "<Name>"} (NVMLError_<Name>), which replays as
    the NvmlError the live backend would have raised."""

    def __init__(self, calls: Mapping[str, Any], init_error: Optional[str] = None):
        self.calls: dict[str, Any] = dict(calls)
        self.init_error = init_error
        self.log: list[str] = []
        self._injected: dict[str, str] = {}
        self._injected_fn: dict[str, str] = {}
        self.initialized = False

    @classmethod
    def from_fixture(cls, path: str) -> ReplayBackend:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        if data.get("kind") != FIXTURE_KIND:
            raise ValueError(f"{path} is not an NVML recording")
        return cls(data["calls"], data.get("init_error"))

    def inject(self, function: str, *args: int, error: str) -> None:
        """Make this exact call (or, with no args, every call of `function`) raise NVMLError_<error>."""
        _known(function)
        if args:
            self._injected[call_key(function, args)] = error
        else:
            self._injected_fn[function] = error

    def set(self, function: str, *args: int, value: Any) -> None:
        _known(function)
        self.calls[call_key(function, args)] = value

    def init(self) -> None:
        if self.init_error:
            raise _replayed_error("nvmlInit", self.init_error)
        self.initialized = True

    def shutdown(self) -> None:
        self.initialized = False

    def call(self, function: str, *args: int) -> Any:
        _known(function)
        if not self.initialized:
            raise UnrecordedCall(f"{function} called before init()")
        key = call_key(function, args)
        self.log.append(key)
        error = self._injected.get(key) or self._injected_fn.get(function)
        if error:
            raise _replayed_error(function, error)
        if key not in self.calls:
            raise UnrecordedCall(f"no recording for {key}")
        value = self.calls[key]
        if isinstance(value, dict) and set(value) == {"nvml_error"}:
            raise _replayed_error(function, value["nvml_error"])
        return value


def _replayed_error(function: str, name: str) -> NvmlError:
    return NvmlError(ERROR_REASONS.get(name, Reason.ERROR), function, name)


class RecordingBackend:
    """Wraps a backend (the live one on a real node) and keeps every answer for a fixture."""

    def __init__(self, inner: NvmlBackend):
        self.inner = inner
        self.calls: dict[str, Any] = {}
        self.init_error: Optional[str] = None

    def init(self) -> None:
        try:
            self.inner.init()
        except NvmlError as exc:
            self.init_error = exc.error_name
            raise

    def shutdown(self) -> None:
        self.inner.shutdown()

    def call(self, function: str, *args: int) -> Any:
        key = call_key(function, args)
        try:
            value = self.inner.call(function, *args)
        except NvmlError as exc:
            self.calls[key] = {"nvml_error": exc.error_name}
            raise
        self.calls[key] = value
        return value

    def fixture(self, source: str) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": FIXTURE_KIND, "version": 1, "source": source, "calls": self.calls}
        if self.init_error:
            out["init_error"] = self.init_error
        return out

"""Field-by-field comparison of a real flight-recorder dump with one written by the test suite's
writer (the NCCL-format fixtures), so a run on a GPU says exactly where the fixtures are wrong.

Both arguments are the unpickled dumps (dicts). The comparison is of shape, not of values: the
keys at each level, the JSON/Python types each field takes (a list's element types too), the
profiling-name prefixes, the states and the version strings.
"""

from __future__ import annotations

from typing import Any


def _type(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        inner = sorted({_type(x) for x in v})
        return f"{type(v).__name__}[{'|'.join(inner)}]" if inner else f"{type(v).__name__}[]"
    return type(v).__name__


def _field_types(rows: list[dict[str, Any]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for row in rows:
        for k, v in row.items():
            out.setdefault(k, set()).add(_type(v))
    return out


def _informative(types: set[str]) -> set[str]:
    return {t for t in types if t != "NoneType" and "[]" not in t}


def _compare_rows(where: str, real: list[dict[str, Any]], ref: list[dict[str, Any]]) -> list[str]:
    diffs = []
    rt, ft = _field_types(real), _field_types(ref)
    for k in sorted(set(rt) - set(ft)):
        diffs.append(
            f"{where}: field {k!r} in the real dump ({'/'.join(sorted(rt[k]))}) is not written by the "
            f"fixtures"
        )
    for k in sorted(set(ft) - set(rt)):
        diffs.append(
            f"{where}: field {k!r} written by the fixtures ({'/'.join(sorted(ft[k]))}) is not in the real "
            f"dump"
        )
    for k in sorted(set(rt) & set(ft)):
        # None is a legal value of the optional fields (time_discovered_*), and an empty list says
        # nothing of its elements' type (a barrier's sizes): compare the others.
        r, f = _informative(rt[k]), _informative(ft[k])
        if r and f and r != f:
            diffs.append(
                f"{where}: field {k!r} is {'/'.join(sorted(r))} in the real dump, "
                f"{'/'.join(sorted(f))} in the fixtures"
            )
    return diffs


def compare(real: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    """Differences, one line each; empty when the fixtures write what the real recorder wrote."""
    diffs = []
    for k in sorted(set(real) - set(ref)):
        diffs.append(f"top level: key {k!r} ({_type(real[k])}) is not written by the fixtures")
    for k in sorted(set(ref) - set(real)):
        diffs.append(f"top level: key {k!r} written by the fixtures is not in the real dump")
    for k in sorted(set(real) & set(ref)):
        if _type(real[k]) != _type(ref[k]) and not (isinstance(real[k], dict) and isinstance(ref[k], dict)):
            diffs.append(
                f"top level: {k!r} is {_type(real[k])} in the real dump, {_type(ref[k])} in the fixtures"
            )
    if real.get("version") != ref.get("version"):
        diffs.append(
            f"version: the real dump says {real.get('version')!r}, the fixtures {ref.get('version')!r}"
        )
    entries = [e for e in real.get("entries", []) if isinstance(e, dict)]
    ref_entries = [e for e in ref.get("entries", []) if isinstance(e, dict)]
    diffs += _compare_rows("entries", entries, ref_entries)
    for name in ("pg_config", "pg_status"):
        a, b = real.get(name), ref.get(name)
        if isinstance(a, dict) and isinstance(b, dict):
            diffs += _compare_rows(
                name,
                [v for v in a.values() if isinstance(v, dict)],
                [v for v in b.values() if isinstance(v, dict)],
            )
    prefixes = sorted({str(e.get("profiling_name", "")).split(":")[0] for e in entries})
    ref_prefixes = sorted({str(e.get("profiling_name", "")).split(":")[0] for e in ref_entries})
    if prefixes != ref_prefixes:
        diffs.append(f"profiling_name prefixes: real {prefixes}, fixtures {ref_prefixes}")
    return diffs


def summary(dump: dict[str, Any]) -> dict[str, Any]:
    """What a reader wants to see of a real dump without unpickling it: versions, states, names."""
    entries = [e for e in dump.get("entries", []) if isinstance(e, dict)]
    return {
        "version": dump.get("version"),
        "comm_lib_version": dump.get("comm_lib_version"),
        "keys": sorted(dump),
        "entries": len(entries),
        "profiling_names": sorted({str(e.get("profiling_name")) for e in entries}),
        "states": sorted({str(e.get("state")) for e in entries}),
        "last": {k: repr(v)[:120] for k, v in entries[-1].items() if k != "frames"} if entries else None,
        "pg_config": {str(k): v for k, v in (dump.get("pg_config") or {}).items()},
        "pg_status": dump.get("pg_status"),
    }

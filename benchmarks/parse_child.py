"""Time three ways of reading a trace's events: json.load, ijson (its fastest available
backend) and pgdoctor's streaming reader. Runs in the benchmark venv (which has ijson); loads
pgdoctor's reader from its file, which needs only the standard library.

    /tmp/hta-venv/bin/python benchmarks/parse_child.py READER_PY TRACE...
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
import time


def _open(path: str):  # type: ignore[no-untyped-def]
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


def main(reader_py: str, paths: list[str]) -> None:
    spec = importlib.util.spec_from_file_location("trace_reader", reader_py)
    assert spec and spec.loader
    reader = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reader)
    import ijson  # type: ignore[import-not-found]

    for path in paths:
        row = {"file": path, "ijson_backend": ijson.backend}
        t = time.perf_counter()
        with _open(path) as f:
            n_json = len(json.load(f)["traceEvents"])
        row["json_load_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        with _open(path) as f:
            n_ijson = sum(1 for _ in ijson.items(f, "traceEvents.item", use_float=True))
        row["ijson_s"] = round(time.perf_counter() - t, 3)
        t = time.perf_counter()
        n_scan = sum(1 for kind, _ in reader.scan(path) if kind == "event")
        row["pgdoctor_scan_s"] = round(time.perf_counter() - t, 3)
        row["events"] = [n_json, n_ijson, n_scan]
        print(json.dumps(row))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])

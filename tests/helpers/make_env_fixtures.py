"""Writes tests/fixtures/codes/ENV*/{bad,good}.json (and .toml where a case sets config).

Each snapshot comes from pgdoctor's real probes run against the case's environment, file tree
and limits (tests/helpers/env_scenarios.py); only the keys a case lists under `override` (facts a
CPU-only machine cannot produce) are set afterwards, in the probe's exact format.
Run as root from the repository root: python -m tests.helpers.make_env_fixtures
"""

from __future__ import annotations

import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "codes"

from tests.helpers.env_scenarios import SCENARIOS  # noqa: E402
from tests.helpers.envlab import snapshot_for  # noqa: E402


def toml_line(key: str, value: object) -> str:
    section, name = key.rsplit(".", 1)
    rendered = (
        f'"{value}"' if isinstance(value, str) else repr(value).lower() if isinstance(value, bool) else value
    )
    return f"[{section}]\n{name} = {rendered}\n"


def main() -> None:
    for code, sc in sorted(SCENARIOS.items()):
        out = HERE / code
        out.mkdir(exist_ok=True)
        for which in ("bad", "good"):
            case = getattr(sc, which)
            with tempfile.TemporaryDirectory() as tmp:
                snap = snapshot_for(case, sc.level, Path(tmp))
            (out / f"{which}.json").write_text(snap.dumps() + "\n")
            cfg = out / f"{which}.toml"
            if case.config:
                cfg.write_text("".join(toml_line(k, v) for k, v in case.config.items()))
            elif cfg.exists():
                cfg.unlink()
        print(code)


if __name__ == "__main__":
    main()

"""Loads the TOML config: thresholds and expectations, validated against the declared keys.

Sections map to dotted keys: `[host] min_shm_bytes = 1e9` is `host.min_shm_bytes`. Unknown keys
and wrong types are errors naming the key, because a misspelled threshold that is silently
ignored is worse than no config.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from pgdoctor.checks import load_all
from pgdoctor.checks.base import CONFIG_KEYS, Config
from pgdoctor.model import numbers

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(ValueError):
    """A config problem the user must fix; the CLI prints it on one line and exits 2."""


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict) and not any(key == name for key in CONFIG_KEYS):
            out.update(_flatten(v, name + "."))
        else:
            out[name] = v
    return out


def _typed(name: str, value: Any) -> Any:
    key = CONFIG_KEYS[name]
    expected = key.type
    if (expected is float and isinstance(value, (int, float))) or (
        expected is int and isinstance(value, int)
    ):
        # TOML has inf and nan; a threshold of either silently disables its check.
        try:
            v = numbers.number(value, f"config key {name}", integer=expected is int, lo=key.lo, hi=key.hi)
        except numbers.NumberError as exc:
            raise ConfigError(str(exc)) from None
        return float(v) if expected is float else v
    if expected is not bool and isinstance(value, bool):
        raise ConfigError(f"config key {name}: expected {expected.__name__}, got bool")
    if not isinstance(value, expected):
        raise ConfigError(
            f"config key {name}: expected {expected.__name__}, got {type(value).__name__} {value!r}"
        )
    return value


def config_from_mapping(data: Mapping[str, Any]) -> Config:
    load_all()
    values = {}
    for name, value in _flatten(data).items():
        if name not in CONFIG_KEYS:
            raise ConfigError(f"unknown config key {name!r} (pgdoctor list --config shows the keys)")
        values[name] = _typed(name, value)
    return Config(values)


def load_config(path: str | None) -> Config:
    if path is None:
        load_all()
        return Config()
    from pgdoctor.probes.files import InputError, read_text_input

    try:
        data = tomllib.loads(read_text_input(path, "config", max_bytes=1 << 20))
    except InputError as exc:
        raise ConfigError(str(exc)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config {path} is not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"config {path} is nested too deep") from None
    return config_from_mapping(data)

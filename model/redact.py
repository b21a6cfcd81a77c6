"""Secrets never reach a report, a snapshot or evidence: values of variables whose names look
like credentials are replaced, and user:password in URLs is masked."""

from __future__ import annotations

import re
from typing import Any

SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^/\s:@]+):(?P<pw>[^/\s@]+)@")
ASSIGNMENT = re.compile(r"\b(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\S+)")
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
REDACTED = "<redacted>"


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask URL credentials and NAME=value assignments whose NAME looks like a secret."""
    text = URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@", text)
    return ASSIGNMENT.sub(
        lambda m: f"{m['name']}={REDACTED}" if is_secret_name(m["name"]) else m.group(0), text
    )


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if is_secret_name(k) else redact_text(v)) for k, v in env.items()}


def scrub(obj: Any) -> Any:
    """Redact every string in a JSON-like structure: the one choke point that snapshots and
    reports pass through on their way out, so no probe or parser can leak a secret by mistake."""
    if isinstance(obj, str):
        return redact_text(obj)
    if isinstance(obj, dict):
        # Only environment-style keys (HF_TOKEN) are judged by name: pgdoctor's own lower-case
        # keys ("key", "session_id") are structure, not secrets.
        return {k: (REDACTED if isinstance(k, str) and ENV_NAME.match(k) and is_secret_name(k) and isinstance(v, str)
                    else scrub(v)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [scrub(v) for v in obj]
    return obj

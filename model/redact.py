"""Secrets never reach a report, a snapshot or evidence: values of variables whose names look
like credentials are replaced, and user:password in URLs is masked."""

from __future__ import annotations

import re
from typing import Any

SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_SECRET_WORD = r"(?:token|secret|password|passwd|pwd|api[-_]?key|access[-_]?key|key|auth|credentials?|cookie)"
# scheme://user:password@host. The password may hold '@' and '/': it runs to the last '@' before
# a host, which itself holds neither.
URL_CREDENTIALS = re.compile(
    r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[^/\s:@]+):(?P<pw>\S*)@(?P<host>[^\s@/]+)")
# scheme://TOKEN@host: a token as the URL's user (https://ghp_...@github.com); short user names
# (git@, alice@) stay.
URL_TOKEN_USER = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<user>[A-Za-z0-9_.~-]{16,})@")
# user:password@host without a scheme (rsync, pip, redis targets); the host needs a dot or a port.
BARE_CREDENTIALS = re.compile(r"(?<![\w/:@])(?P<user>[\w.-]+):(?P<pw>[^\s@:/]+)@(?P<host>[\w-]+(?:\.[\w-]+)+|[\w-]+:\d+)")
# NAME=value, NAME="a value", NAME='a value'
ASSIGNMENT = re.compile(r"\b(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\"[^\"]*\"|'[^']*'|\S+)")
# "HF_TOKEN": "value" (JSON, YAML and Python dict reprs)
QUOTED_PAIR = re.compile(r"(?P<q>[\"'])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P=q)\s*:\s*(?P<vq>[\"'])(?P<value>[^\"']*)(?P=vq)")
# --token X, --hf_token X, --api-key=X: a flag whose name says secret takes the next word.
SECRET_FLAG = re.compile(rf"(?P<flag>--?[\w-]*{_SECRET_WORD}[\w-]*)(?P<sep>=|\s+)(?P<value>(?!-)\S+)", re.IGNORECASE)
# Authorization: Bearer X, Proxy-Authorization: Basic X, X-Api-Key: X
AUTH_HEADER = re.compile(
    r"(?P<name>\b(?:proxy-)?authorization|\bx-[\w-]*(?:token|key)\b)(?P<sep>\s*[:=]\s*)"
    r"(?P<scheme>(?:bearer|basic|token|digest)\s+)?(?P<value>\S+)", re.IGNORECASE)
ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
# Every shape above needs one of these: '@' (URLs, user:pw@host), '=' (assignments, --flag=x),
# ':' (quoted pairs, headers) or a dash followed later by whitespace (--token X). Text with none
# of them (most measurement keys, numbers, names) skips the seven substitutions.
_MAY_HOLD_SECRET = re.compile(r"[@=:]")
_WHITESPACE = re.compile(r"\s")
REDACTED = "<redacted>"


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask every shape of credential pgdoctor knows in free text: URL userinfo, user:pw@host,
    NAME=value and "NAME": "value" with a secret-looking NAME, secret flags and auth headers."""
    if not text or not (_MAY_HOLD_SECRET.search(text) or ("-" in text and _WHITESPACE.search(text))):
        return text
    text = URL_CREDENTIALS.sub(lambda m: f"{m['scheme']}{m['user']}:{REDACTED}@{m['host']}", text)
    text = URL_TOKEN_USER.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    text = BARE_CREDENTIALS.sub(lambda m: f"{m['user']}:{REDACTED}@{m['host']}", text)
    text = AUTH_HEADER.sub(lambda m: f"{m['name']}{m['sep']}{m['scheme'] or ''}{REDACTED}", text)
    text = SECRET_FLAG.sub(lambda m: f"{m['flag']}{m['sep']}{REDACTED}" if m["value"] != REDACTED else m.group(0), text)
    text = QUOTED_PAIR.sub(lambda m: f"{m['q']}{m['name']}{m['q']}: {m['vq']}{REDACTED}{m['vq']}"
                           if is_secret_name(m["name"]) else m.group(0), text)
    return ASSIGNMENT.sub(
        lambda m: f"{m['name']}={REDACTED}" if is_secret_name(m["name"]) else m.group(0), text
    )


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if is_secret_name(k) else redact_text(v)) for k, v in env.items()}


# Terminal control characters from logs (ESC sequences that clear the screen or retitle the
# window, carriage returns that overwrite a line) and lone surrogates (undecodable bytes kept
# by surrogateescape, which no encoder writes) never reach an output: they become visible text.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0b, 0x20), *range(0x7f, 0xa0))}
_SURROGATES = {c: "\ufffd" for c in range(0xD800, 0xE000)}
_NEUTRAL = str.maketrans({**_CONTROLS, **_SURROGATES})


def neutral(text: str) -> str:
    if text.isascii() and text.isprintable():  # the common case: nothing to translate
        return text
    return text.translate(_NEUTRAL)


def scrub(obj: Any) -> Any:
    """Redact every string in a JSON-like structure: the one choke point that snapshots and
    reports pass through on their way out, so no probe or parser can leak a secret by mistake
    (nor a log line drive the user's terminal)."""
    if isinstance(obj, str):
        return neutral(redact_text(obj))
    if isinstance(obj, dict):
        # Only environment-style keys (HF_TOKEN) are judged by name: pgdoctor's own lower-case
        # keys ("key", "session_id") are structure, not secrets.
        return {k: (REDACTED if isinstance(k, str) and ENV_NAME.match(k) and is_secret_name(k) and isinstance(v, str)
                    else scrub(v)) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [scrub(v) for v in obj]
    return obj

"""Secrets never reach a report, a snapshot or evidence: values of variables whose names look
like credentials are replaced, and user:password in URLs is masked."""

from __future__ import annotations

import re
from typing import Any

from pgdoctor.model import lazy_re

SECRET_NAME = lazy_re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|CREDENTIAL|AUTH|COOKIE|SESSION|SIGNATURE|^SIG$", re.IGNORECASE
)
_SECRET_WORD = r"(?:token|secret|password|passwd|pwd|api[-_]?key|access[-_]?key|key|auth|credentials?|cookie)"
# scheme://user:password@host. The password may hold '@' and '/': it runs to the last '@' before
# a host, which itself holds neither.
# A scheme starts at the first letter of a run of scheme characters (`pre` holds the digits,
# '+', '.', '-' before it): a search that tried every letter of a long run again scanned the
# run from each, quadratic in its length (a 64 KiB environment value took 30 s).
_SCHEME = r"(?<![a-zA-Z0-9+.-])(?P<pre>[0-9+.-]*+)(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*+://)"
# The password is at most 4 KiB (a JWT is one): a run of "a://a://..." with no '@' otherwise
# cost the rest of the run at each scheme.
URL_CREDENTIALS = lazy_re.compile(
    _SCHEME + r"(?P<user>[^/\s:@]*):(?P<pw>\S{0,4096})@(?P<host>[^\s@/]+)"
)  # redis://:pw@host
# scheme://TOKEN@host: a token as the URL's user (https://ghp_...@github.com); short user names
# (git@, alice@) stay.
URL_TOKEN_USER = lazy_re.compile(_SCHEME + r"(?P<user>[A-Za-z0-9_.~-]{16,})@")
# user:password@host without a scheme (rsync, pip, redis targets, a MASTER_ADDR quoted in an
# error): any host name, dotted or not, with an optional port. Also after a '/': a file or directory
# named so (logs/admin:pw@node1.log) is echoed in error lines and reports.
BARE_CREDENTIALS = lazy_re.compile(
    r"(?<![\w:@.-])(?P<user>[\w.-]+):(?P<pw>[^\s@:/]+)@(?P<host>[\w-]+(?:\.[\w-]+)*(?::\d+)?)"
)
# NAME=value, NAME="a value", NAME='a value'; a URL's query value ends at '&'.
ASSIGNMENT = lazy_re.compile(r"\b(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>\"[^\"]*\"|'[^']*'|[^\s&]+)")
# Names are matched atomically ((?>...)): a name is the whole run of its characters, and a
# failed match is not retried at every split of the run between its words (quadratic, and
# cubic for a flag, on a long run such as "token_token_..." or "-key-key-...").
# A name made of words one of which says secret (HF_TOKEN, aws_secret_access_key, client-secret,
# api_key), never a longer word that merely holds one (Tokenizer, KeyError, passwords_checked).
_SECRET_NAME_WORDS = (
    r"(?:[A-Za-z0-9]+[_.-])*(?:token|secret|password|passwd|pwd|api[_-]?key|access[_-]?key|"
    r"private[_-]?key|credentials?|auth)(?:[_.-][A-Za-z0-9]+)*"
)
# HF_TOKEN: x, aws_secret_access_key = x, password : 'x' (YAML, INI, Python, logs), and
# os.environ["WANDB_API_KEY"] = "x": a secret name, ':' or '=' with blanks, then the value.
SPACED_PAIR = lazy_re.compile(
    rf"(?<![\w.-])(?P<name>(?>{_SECRET_NAME_WORDS}))(?P<close>[\"']\])?(?P<sep>\s*[:=]\s*|\s+[:=]?\s*)"
    r"(?P<value>\"[^\"]*\"|'[^']*'|[^\s,;&}\]]+)",
    re.IGNORECASE,
)
# Tokens recognisable by their own shape: Hugging Face, GitHub, Slack, AWS access key ids,
# OpenAI-style and GitLab keys. The distinctive prefixes (hf_, gh[pousr]_, github_pat_, glpat-,
# xox[abprs]-) are masked wherever they stand, also glued to a letter or digit ("loginhf_...",
# "Xghp_..."): only a '_' before one (a snake_case identifier such as model_hf_checkpoint or
# load_hf_AutoModelForCausalLM) keeps it. sk- and AKIA are common inside words ("task-",
# "disk-"), so they still need a word boundary.
# Also npm tokens, AWS's temporary key ids (ASIA, as AKIA), Google API keys (AIza), JSON Web Tokens
# (three base64url parts, the first two a JSON object's "eyJ") and the secret path of a Slack webhook.
TOKEN_SHAPE = lazy_re.compile(
    r"(?<!_)(?:hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|"
    r"xox[abprs]-[\w-]{10,}|glpat-[\w-]{20,}|npm_[A-Za-z0-9]{30,})|"
    r"\b(?:A[KS]IA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,}|AIza[\w-]{35}|eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]*)|"
    r"(?<=hooks\.slack\.com/services/)[\w/]+"
)
# Name=value pairs after a ';' inside one value (Azure and ADO.NET connection strings:
# "...;AccountKey=X;", "Server=db;Password=X"): ASSIGNMENT keeps the whole value of a harmless
# first name (AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountKey=X).
SEMICOLON_PAIR = lazy_re.compile(
    r"(?<=;)(?P<lead>\s*)(?P<name>[A-Za-z][A-Za-z0-9_ ]*+)=(?P<value>[^;\s\"']+)"
)
BEARER = lazy_re.compile(r"\b(?P<scheme>Bearer)\s+(?P<value>[\w.~+/=-]{8,})", re.IGNORECASE)
# A whole value that is user:password@host (MASTER_ADDR, TORCHELASTIC_RDZV_ENDPOINT), whatever the host.
WHOLE_CREDENTIALS = lazy_re.compile(r"(?P<user>[^\s:@/]+):(?P<pw>[^\s@]+)@(?P<host>[^\s@]+)")
# "HF_TOKEN": "value" (JSON, YAML and Python dict reprs)
QUOTED_PAIR = lazy_re.compile(
    r"(?P<q>[\"'])(?P<name>[A-Za-z_][A-Za-z0-9_.-]*)(?P=q)\s*:\s*(?P<vq>[\"'])(?P<value>[^\"']*)(?P=vq)"
)
# --token X, --hf_token X, --api-key=X: a flag whose name says secret takes the next word.
SECRET_FLAG = lazy_re.compile(
    rf"(?<![\w-])(?P<flag>(?>--?[\w-]*{_SECRET_WORD}[\w-]*))(?P<sep>=|\s+)(?P<value>(?!-)\S+)", re.IGNORECASE
)
# Authorization: Bearer X, Proxy-Authorization: Basic X, X-Api-Key: X
AUTH_HEADER = lazy_re.compile(
    r"(?P<name>\b(?:proxy-)?authorization|(?<![\w-])x-[\w-]*(?:token|key)\b)(?P<sep>\s*[:=]\s*)"
    r"(?P<scheme>(?:bearer|basic|token|digest)\s+)?(?P<value>\S+)",
    re.IGNORECASE,
)
# A secret that a program takes as a positional word or under an option whose name says nothing
# (its usage text does): `docker login -u '$oauthtoken' -p KEY` (the NGC registry's own instructions),
# `sshpass -p PW`, `mysql -pPW`, `redis-cli -a PW`, `curl -u user:PW`, `wandb login KEY`, `az login
# -p PW`, openssl's `-passin pass:PW`, `aws configure set aws_secret_access_key KEY` and a key echoed
# into a login (`echo KEY | docker login --password-stdin`). Each shape names its program, so a `-p`
# or `-a` of any other command (a port, a path) stays; the option is looked for in the next 16 words
# (_ARGS), so that a line of many program names costs each at most that much.
_ARGS = r"(?:[^\S\n]+[^\s|;&]+){0,16}?"
_WORD = r"""(?P<value>'[^'\n]*'|"[^"\n]*"|(?![-$])[^\s'"|;&]+)"""
_REGISTRY_LOGIN = r"(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|helm(?:\s+registry)?|az)\s+login\b"
POSITIONAL_SECRETS = (
    lazy_re.compile(rf"\b{_REGISTRY_LOGIN}{_ARGS}\s-p(?:\s+|=){_WORD}"),
    lazy_re.compile(rf"\bsshpass\s+-p\s*{_WORD}"),
    lazy_re.compile(rf"\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b{_ARGS}\s-p{_WORD}"),
    lazy_re.compile(rf"\bredis-cli\b{_ARGS}\s(?:-a|--pass)\s+{_WORD}"),
    lazy_re.compile(
        rf"\bcurl\b{_ARGS}\s(?:-u|--user|-U|--proxy-user)(?:\s+|=)?['\"]?[^\s:'\"]*:(?P<value>[^\s'\"]+)"
    ),
    lazy_re.compile(rf"\bwandb\s+login\b{_ARGS}\s+(?P<value>[A-Za-z0-9_-]{{32,}})(?![\w-])"),
    lazy_re.compile(r"(?<![\w-])-(?:passin|passout|pass|password)\s+pass:(?P<value>[^\s'\"]+)"),
    lazy_re.compile(
        r"\baws\s+configure\s+set\s+(?:[\w-]+\.)*aws_(?:secret_access_key|session_token)\s+" + _WORD
    ),
    lazy_re.compile(
        rf"\b(?:echo|printf)\s+(?:-n\s+|['\"]?%s['\"]?\s+)?{_WORD}\s*\|\s*(?:sudo\s+)?"
        rf"(?:{_REGISTRY_LOGIN}|(?:wandb|huggingface-cli|hf(?:\s+auth)?|gh\s+auth)\s+login\b)"
    ),
)
# Every shape above holds one of these words.
_POSITIONAL_WORDS = lazy_re.compile(r"login|sshpass|mysql|mariadb|redis-cli|curl|pass:|aws\s+configure")
ENV_NAME = lazy_re.compile(r"^[A-Z][A-Z0-9_]*$")
# Every shape above needs one of these: '@' (URLs, user:pw@host), '=' (assignments, --flag=x),
# ':' (quoted pairs, headers), "login" (a key after `wandb login` or echoed into one) or a dash
# followed later by whitespace (--token X, sshpass -p X). Text with none of them (most measurement
# keys, numbers, names) skips every substitution.
_MAY_HOLD_SECRET = lazy_re.compile(
    r"[@=:]|hf_|gh[pousr]_|github_pat|xox|A[KS]IA|sk-|glpat|npm_|AIza|eyJ|[Bb]earer|[Tt]oken|"
    r"[Ss]ecret|[Pp]ass|[Kk]ey|login"
)
_WHITESPACE = lazy_re.compile(r"\s")
REDACTED = "<redacted>"


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def redact_text(text: str) -> str:
    """Mask every shape of credential pgdoctor knows in free text: URL userinfo, user:pw@host,
    NAME=value and "NAME": "value" with a secret-looking NAME, secret flags and auth headers."""
    if not text or not (_MAY_HOLD_SECRET.search(text) or ("-" in text and _WHITESPACE.search(text))):
        return text
    whole = WHOLE_CREDENTIALS.fullmatch(text) if "://" not in text else None
    if whole:
        return f"{whole['user']}:{REDACTED}@{whole['host']}"
    text = TOKEN_SHAPE.sub(REDACTED, text)
    if _POSITIONAL_WORDS.search(text):
        for shape in POSITIONAL_SECRETS:
            text = shape.sub(_positional, text)
    if "@" in text:  # the userinfo shapes: no '@', no search through a long run for one
        text = URL_CREDENTIALS.sub(
            lambda m: f"{m['pre']}{m['scheme']}{m['user']}:{REDACTED}@{m['host']}", text
        )
        text = URL_TOKEN_USER.sub(lambda m: f"{m['pre']}{m['scheme']}{REDACTED}@", text)
        text = BARE_CREDENTIALS.sub(lambda m: f"{m['user']}:{REDACTED}@{m['host']}", text)
    text = AUTH_HEADER.sub(lambda m: f"{m['name']}{m['sep']}{m['scheme'] or ''}{REDACTED}", text)
    text = SECRET_FLAG.sub(
        lambda m: f"{m['flag']}{m['sep']}{REDACTED}" if m["value"] != REDACTED else m.group(0), text
    )
    text = QUOTED_PAIR.sub(
        lambda m: (
            f"{m['q']}{m['name']}{m['q']}: {m['vq']}{REDACTED}{m['vq']}"
            if is_secret_name(m["name"])
            else m.group(0)
        ),
        text,
    )
    text = SPACED_PAIR.sub(_spaced, text)
    text = BEARER.sub(lambda m: f"{m['scheme']} {REDACTED}", text)
    if ";" in text:
        text = SEMICOLON_PAIR.sub(
            lambda m: f"{m['lead']}{m['name']}={REDACTED}" if is_secret_name(m["name"]) else m.group(0), text
        )
    return ASSIGNMENT.sub(_assignment, text)


def _positional(m: re.Match[str]) -> str:
    """The match with its `value` group masked (inside its quotes, where it is quoted)."""
    value = m["value"]
    if REDACTED in value:
        return m.group(0)
    start, end = m.start("value") - m.start(), m.end("value") - m.start()
    return f"{m.group(0)[:start]}{_masked(value)}{m.group(0)[end:]}"


def _masked(value: str) -> str:
    """REDACTED in place of `value`, inside the quotes the value was given in."""
    q = value[0] if value[:1] in "\"'" and len(value) > 1 else ""
    return f"{q}{REDACTED}{q}"


def _assignment(m: re.Match[str]) -> str:
    if is_secret_name(m["name"]):
        return f"{m['name']}={REDACTED}"
    # MASTER_ADDR=admin:pw@node1: a value that is user:password@host, whatever the host's form.
    whole = WHOLE_CREDENTIALS.fullmatch(m["value"]) if "://" not in m["value"] else None
    if whole:
        return f"{m['name']}={whole['user']}:{REDACTED}@{whole['host']}"
    return m.group(0)


_NOT_SECRETS = frozenset({"", "true", "false", "none", "null", "yes", "no", "on", "off", "<redacted>"})


def _spaced(m: re.Match[str]) -> str:
    value = m["value"]
    if REDACTED in value or (not m["close"] and ":" not in m["sep"] and "=" not in m["sep"]):
        return m.group(0)  # already masked, or "token 512" (a name and a word, no separator)
    bare = value.strip("\"'")
    if bare.lower() in _NOT_SECRETS or (bare.isdigit() and len(bare) < 8):
        return m.group(0)  # "password_checked: true", "max token: 512": no credential
    return f"{m['name']}{m['close'] or ''}{m['sep']}{_masked(value)}"


def redact_env(env: dict[str, str]) -> dict[str, str]:
    return {k: (REDACTED if is_secret_name(k) else redact_text(v)) for k, v in env.items()}


# Terminal control characters from logs (ESC sequences that clear the screen or retitle the
# window, carriage returns that overwrite a line) and lone surrogates (undecodable bytes kept
# by surrogateescape, which no encoder writes) never reach an output: they become visible text.
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}
# Bidirectional controls (embeddings, overrides, isolates, marks) reorder what a terminal shows
# ("Trojan Source"): a log line or file name holding U+202E could display a different text.
_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_CONTROLS.update({c: f"\\u{c:04x}" for c in _BIDI})
_SURROGATES = {c: "\ufffd" for c in range(0xD800, 0xE000)}
_NEUTRAL = str.maketrans({**_CONTROLS, **_SURROGATES})


def neutral(text: str) -> str:
    if text.isascii() and text.isprintable():  # the common case: nothing to translate
        return text
    return text.translate(_NEUTRAL)


# What a console line may hold besides printable text: newlines, tabs, pgdoctor's own colours
# (SGR: ESC [ digits m) and its progress line's "carriage return, erase line". Every other control
# (OSC retitling, CSI clearing the screen or moving the cursor, BEL, a lone CR, C1) becomes text.
_CONSOLE_CONTROL = lazy_re.compile(
    r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_CONSOLE_KEEP = lazy_re.compile(r"\x1b\[[0-9;]*m|\r\x1b\[K")


def console_safe(text: str) -> str:
    """`text` as a terminal may show it: the one rule of the console sink (cli/sink.py)."""
    if not _CONSOLE_CONTROL.search(text):
        return text
    out, last = [], 0
    for m in _CONSOLE_KEEP.finditer(text):
        out.append(text[last : m.start()].translate(_NEUTRAL))
        out.append(m.group())
        last = m.end()
    out.append(text[last:].translate(_NEUTRAL))
    return "".join(out)


def scrub(obj: Any) -> Any:
    """Redact every string in a JSON-like structure: the one choke point that snapshots and
    reports pass through on their way out, so no probe or parser can leak a secret by mistake
    (nor a log line drive the user's terminal)."""
    if isinstance(obj, str):
        return neutral(redact_text(obj))
    if isinstance(obj, dict):
        # Only environment-style keys (HF_TOKEN) are judged by name: pgdoctor's own lower-case
        # keys ("key", "session_id") are structure, not secrets.
        return {
            k: (
                REDACTED
                if isinstance(k, str) and ENV_NAME.match(k) and is_secret_name(k) and isinstance(v, str)
                else scrub(v)
            )
            for k, v in obj.items()
        }
    if isinstance(obj, (list, tuple)):
        return [scrub(v) for v in obj]
    return obj

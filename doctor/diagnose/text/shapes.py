"""Undo the encodings a paste went through before it reached pgdoctor, at one place.

Users paste a known message in shapes its source never printed: percent-encoded in a search link
("CUDA%20out%20of%20memory", "+" for spaces, %0A for line breaks), HTML-escaped by a web page
(&gt; &quot; &#39;), with non-breaking or zero-width spaces and typographic quotes from a rendered
page, or as one JSON record whose string value holds the message (structured loggers, Ray, an
elastic error file). Every rule is written against the text as the program printed it, so the
text layer gives the rules that text: `decode` is applied to each physical line before it is cut
into logical lines (normalize.py), and the scanner tests a line that carries one of the `MARKERS`
on its decoded text (scan.py), so that no signature family needs a rule of its own for a shape.

A decoded line keeps the number of the physical line it came from: a line whose encoding held
line breaks (%0A, an escaped newline) becomes several logical lines with that number.
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

# html and urllib.parse are imported where a line needs them: 6 ms of every start-up otherwise.

# Literal bytes that only an encoded line carries (or almost only): the scanner searches them with
# its anchors, and a line holding one is tested on its decoded text. At least three bytes each, so
# that the one pass of the literal search stays as fast as before (short literals cost it most).
MARKERS: tuple[bytes, ...] = (
    b"%20",
    b"%3A",
    b"%3a",
    b"%0A",
    b"%0a",
    b"%27",
    b"%22",
    b"&quot;",
    b"&gt;",
    b"&lt;",
    b"&amp;",
    b"&#39;",
    b"&#x27;",
    b"&#34;",
    b"\xc2\xa0",  # U+00A0 NO-BREAK SPACE in UTF-8 (the one two-byte marker: no other byte pair is it)
    b"\xe2\x80\x8b",  # U+200B ZERO WIDTH SPACE
    b"\xe2\x80\xaf",  # U+202F NARROW NO-BREAK SPACE
    b"\xe2\x80\x98",  # U+2018-U+201D: the curly quotes of a rendered page
    b"\xe2\x80\x99",
    b"\xe2\x80\x9c",
    b"\xe2\x80\x9d",
)
# How every marker starts: a line without these (a few memchr calls) holds no marker.
HEADS: tuple[bytes, ...] = (b"%", b"&", b"\xc2\xa0", b"\xe2\x80")
assert all(m.startswith(HEADS) for m in MARKERS)
MARKED = re.compile(b"|".join(re.escape(m) for m in MARKERS))

# Percent-encoding: two escapes of a byte a message holds (space, colon, quote, line break, ...),
# so that "100%|" of a progress bar or a lone "%2" never counts.
_PERCENT = re.compile(r"%(?:2[0-9A-Fa-f]|3[A-Fa-f0-9]|0[AaDd9]|5[BbDd]|7[BbDd])")
# A search or issue link alone on its line: the text is the value of one of these parameters of its
# query. (A link inside a log line is the line's own text, left as it is.)
_QUERY_KEYS = ("q", "query", "search_query", "text", "body", "title")
_ENTITY = re.compile(r"&(?:[a-zA-Z]{2,8}|#[0-9]{1,6}|#[xX][0-9a-fA-F]{1,5});")
# Typographic spaces and quotes of a rendered page, and the zero-width characters it inserts.
_TYPOGRAPHY = str.maketrans(
    {
        "\u00a0": " ",
        "\u2002": " ",
        "\u2003": " ",
        "\u2007": " ",
        "\u2009": " ",
        "\u202f": " ",
        "\u200b": "",
        "\u200c": "",
        "\u200d": "",
        "\u2060": "",
        "\ufeff": "",
        "\u2018": "'",
        "\u2019": "'",
        "\u201c": '"',
        "\u201d": '"',
    }
)
# A JSON object on one line whose string values hold the message: the keys loggers use for it.
_MESSAGE_KEYS = (
    "message",
    "msg",
    "log",
    "text",
    "error",
    "err",
    "exception",
    "traceback",
    "stack",
    "py_callstack",
    "raw_error",  # torchelastic's worker status event: the error file of the failed worker
)
# A GitHub Actions log copied from its web viewer into an issue: the viewer's line-number anchors come along
# as Markdown links around digits of the text ("line 2:  23[57](https://github.com/o/r/runs/7454288162?
# check_suite_focus=true#step:6:58) Killed"; newer "/actions/runs/N/job/M#step:6:58"). The digits in the
# brackets are the text's own; the link is the viewer's. (Only digits are linked, so a row's anchor words
# stay whole on the raw line and no marker is needed for the scanner.)
_ACTIONS_LINK = re.compile(r"\[(\d+)\]\(https://github\.com/[^()\s]*#step:\d+:\d+\)")
_MAX_JSON = 1 << 20  # a bigger record is read by the escape splitter of normalize.py instead


def decode(text: str) -> str:
    """The line as its program printed it: percent-encoding, HTML entities, typographic spaces and
    quotes, a log viewer's line links undone; the message of a one-line JSON record. Line breaks the
    encoding held come back as line breaks; the caller cuts there. A line in none of these shapes is
    returned as it is (the common case costs a few substring tests)."""
    if not text.isascii():
        text = text.translate(_TYPOGRAPHY)
    if "%" in text:
        text = _percent_decoded(text)
    if "&" in text and ";" in text and _ENTITY.search(text):
        import html

        text = html.unescape(text)
        if not text.isascii():  # &nbsp; and &#8217; become the characters above
            text = text.translate(_TYPOGRAPHY)
    if "](https://github.com/" in text:
        text = _ACTIONS_LINK.sub(r"\1", text)
    if text[:1] == "{" or text[-1:] == "}":
        text = _json_message(text)
    return text


def _percent_decoded(text: str) -> str:
    import urllib.parse

    link = _link_text(text)
    if link is not None:  # the query of a search link: '+' is a space in it
        return urllib.parse.unquote_plus(link)
    if len(_PERCENT.findall(text, 0, 4096)) < 2:
        return text
    # '+' stands for a space only where the encoder left no space at all (a form's encoding).
    return urllib.parse.unquote_plus(text) if " " not in text else urllib.parse.unquote(text)


def _link_text(text: str) -> Optional[str]:
    """The raw value of a search parameter when the line is one link and nothing else (string
    operations only: a regular expression over a long token of '&q=' backtracked for seconds)."""
    token = text.strip().lstrip("<(").rstrip(">)")
    if not token.startswith(("https://", "http://")) or "?" not in token or len(token.split()) != 1:
        return None
    for pair in token.split("?", 1)[1].split("#", 1)[0].split("&"):
        key, eq, value = pair.partition("=")
        if eq and key in _QUERY_KEYS:
            return value
    return None


def _json_message(text: str) -> str:
    """The message string(s) of a JSON object on one line, joined by line breaks; the line itself
    when it is no such object (a log line that merely ends with a brace)."""
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")) or len(body) > _MAX_JSON:
        return text
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested deeper than the parser recurses
        return text
    found = _messages(obj)
    return "\n".join(found) if found else text


def _messages(obj: Any, depth: int = 0) -> list[str]:
    """The values under the message keys, depth first (an elastic error file nests its message
    and the py_callstack beside it); none found, the longest string value, which is the message
    of a record whose key no logger here spells."""
    if not isinstance(obj, dict) or depth > 4:
        return []
    out: list[str] = []
    for key, value in obj.items():
        if isinstance(value, dict):
            out += _messages(value, depth + 1)
        elif isinstance(value, str) and key.lower() in _MESSAGE_KEYS and value.strip():
            out.append(value)
    if not out and depth == 0:
        strings = [v for v in obj.values() if isinstance(v, str)]
        longest = max(strings, key=len, default="")
        if " " in longest.strip():
            out.append(longest)
    return out

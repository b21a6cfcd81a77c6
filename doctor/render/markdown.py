"""The small Markdown subset playbooks use, to HTML, with everything escaped.

Headings, paragraphs, fenced code, bullet and numbered lists, `code`, **bold** and links.
Links become their text followed by the address in plain text: the HTML report is one file
that loads and links to nothing outside itself (it is read on air-gapped clusters).
"""

from __future__ import annotations

import html
import re

_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)")
_BULLET = re.compile(r"^\s*[-*] +(.*)$")
_NUMBERED = re.compile(r"^\s*(\d+)[.)] +(.*)$")


def inline(text: str) -> str:
    out, pos = [], 0
    for m in _INLINE.finditer(text):
        out.append(html.escape(text[pos : m.start()]))
        code, bold, label, url = m.groups()
        if code is not None:
            out.append(f"<code>{html.escape(code)}</code>")
        elif bold is not None:
            out.append(f"<strong>{html.escape(bold)}</strong>")
        else:
            out.append(f'{html.escape(label)} (<span class="url">{html.escape(url)}</span>)')
        pos = m.end()
    out.append(html.escape(text[pos:]))
    return "".join(out)


def to_html(text: str, heading_level: int = 4) -> str:
    """`## X` becomes <h{heading_level}>, `### X` the level below."""
    out: list[str] = []
    para: list[str] = []
    items: list[str] = []
    list_tag = ""
    list_start = 1
    lines = text.splitlines()

    def flush() -> None:
        nonlocal list_tag, list_start
        if para:
            out.append("<p>" + inline(" ".join(s.strip() for s in para)) + "</p>")
            para.clear()
        if items:
            # A numbered list that a code block interrupted goes on with its own numbers.
            start = f' start="{list_start}"' if list_tag == "ol" and list_start != 1 else ""
            out.append(
                f"<{list_tag}{start}>" + "".join(f"<li>{inline(i)}</li>" for i in items) + f"</{list_tag}>"
            )
            items.clear()
            list_tag = ""
            list_start = 1

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith("```"):
                body.append(lines[i])
                i += 1
            out.append("<pre><code>" + html.escape("\n".join(body)) + "</code></pre>")
        elif stripped.startswith("#"):
            flush()
            hashes = len(stripped) - len(stripped.lstrip("#"))
            level = min(6, heading_level + max(0, hashes - 2))
            out.append(f"<h{level}>{inline(stripped.lstrip('#').strip())}</h{level}>")
        elif not stripped:
            flush()
        elif _BULLET.match(line) or _NUMBERED.match(line):
            bullet, numbered = _BULLET.match(line), _NUMBERED.match(line)
            tag = "ul" if bullet else "ol"
            if para or (items and tag != list_tag):
                flush()
            if not items and numbered:
                list_start = int(numbered.group(1))
            list_tag = tag
            items.append(bullet.group(1) if bullet else numbered.group(2))  # type: ignore[union-attr]
        elif items and line.startswith((" ", "\t")):
            items[-1] += " " + stripped  # continuation of a list item
        else:
            if items:
                flush()
            para.append(stripped)
        i += 1
    flush()
    return "\n".join(out)

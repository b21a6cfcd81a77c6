"""One Markdown playbook per finding code: front matter, then fixed sections."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

SECTIONS = (
    "What it means",
    "Why it matters",
    "How to confirm",
    "Fix",
    "Verify",
    "Known false positives",
    "References",
)
FRONT_MATTER_KEYS = ("code", "slug", "title", "severity", "category")


class PlaybookError(ValueError):
    pass


@dataclass(frozen=True)
class Playbook:
    filename: str
    meta: dict[str, str]
    sections: dict[str, str]
    text: str

    @property
    def code(self) -> str:
        return self.meta["code"]

    @property
    def slug(self) -> str:
        return self.meta["slug"]

    @property
    def body(self) -> str:
        return self.text.split("\n---\n", 1)[1].lstrip("\n") if "\n---\n" in self.text else self.text

    def source(self) -> bytes:
        # Bytes, not self.text: text mode folds CRLF into LF, and `explain --raw` promises the file.
        return resources.files(__name__).joinpath(self.filename).read_bytes()


def parse(filename: str, text: str) -> Playbook:
    if not text.startswith("---\n") or "\n---\n" not in text[4:]:
        raise PlaybookError(f"{filename}: no front matter")
    head, body = text[4:].split("\n---\n", 1)
    meta = {}
    for line in head.splitlines():
        if line.strip():
            key, _, value = line.partition(":")
            meta[key.strip()] = value.strip().strip('"')
    missing = [k for k in FRONT_MATTER_KEYS if k not in meta]
    if missing:
        raise PlaybookError(f"{filename}: front matter lacks {', '.join(missing)}")
    sections: dict[str, str] = {}
    current = None
    for line in body.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            sections[current] = ""
        elif current is not None:
            sections[current] += line + "\n"
    return Playbook(filename, meta, {k: v.strip() for k, v in sections.items()}, text)


def all_playbooks() -> list[Playbook]:
    out = []
    for entry in sorted(resources.files(__name__).iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            out.append(parse(entry.name, entry.read_text(encoding="utf-8")))
    return out


def find(code_or_slug: str) -> Playbook | None:
    wanted = code_or_slug.strip()
    for pb in all_playbooks():
        if wanted.upper() == pb.code or wanted.lower() == pb.slug:
            return pb
    return None

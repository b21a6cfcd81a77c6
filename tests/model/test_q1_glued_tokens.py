"""A token glued to a letter or digit ("loginhf_...", "Xghp_...") reached reports and the console:
TOKEN_SHAPE began with a word boundary. The distinctive prefixes are masked wherever they stand;
sk- and AKIA, common inside words, still need one, and snake_case identifiers stay."""

from __future__ import annotations

import io

import pytest

from pgdoctor.cli.sink import ConsoleSink
from pgdoctor.model.redact import redact_text, scrub

HF = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
GH = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.mark.parametrize(
    "text, secret",
    [
        (f"login{HF} failed", HF[3:]),
        (f"X{GH}", GH[4:]),
        (f"9{GH}", GH[4:]),
        ("cloned withgho_AbCdEfGhIjKlMnOpQrStUvWx", "AbCdEfGhIjKlMnOpQrStUvWx"),
        ("keygithub_pat_11ABCDEFG0123456789_abcdefghijKLMNOP", "0123456789_abcdefghij"),
        ("tokenglpat-AbCdEfGhIjKlMnOpQrSt", "AbCdEfGhIjKlMnOpQrSt"),
        ("slackxoxb-1234567890-abcdefghij", "1234567890-abcdefghij"),
        (f"({HF})", HF[3:]),  # still masked where a boundary stands
    ],
)
def test_a_token_glued_to_a_letter_or_digit_is_masked(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out and "<redacted>" in out
    assert secret not in str(scrub({"line": text}))


def test_a_glued_token_never_reaches_the_console() -> None:
    stream = io.StringIO()
    ConsoleSink(stream, redact=True).write(f"error: bad credential login{HF}\n")
    assert HF[3:] not in stream.getvalue() and "<redacted>" in stream.getvalue()


@pytest.mark.parametrize(
    "text",
    [
        "model_hf_checkpoint",
        "load_hf_AutoModelForCausalLMWrapper",  # snake_case: '_' before the prefix
        "use_ghp_AbCdEfGhIjKlMnOpQrStUvWx",
        "task-AbCdEfGhIjKlMnOpQrStUvWxYz",  # sk- inside a word
        "disk-AbCdEfGhIjKlMnOpQrStUvWxYz01",
        "XAKIAABCDEFGHIJKLMNOP",  # AKIA inside a word
        "pathhf_short",  # too short to be a token
        "ghp_short and hf_abc",
    ],
)
def test_near_misses_stay(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize("text", ["sk-AbCdEfGhIjKlMnOpQrStUvWx", "id AKIAABCDEFGHIJKLMNOP"])
def test_word_bounded_shapes_are_still_masked(text: str) -> None:
    assert "<redacted>" in redact_text(text)

"""Exact-value redaction: a configured secret is caught as itself and in its encodings."""

from __future__ import annotations

import base64
import re
import subprocess
from urllib.parse import quote, quote_plus

import pytest

from seam.plugins.safety.redact import redact
from seam.plugins.safety.secrets import Secret, SecretRedactor

# Shaped like nothing a pattern knows: only its exact value gives it away.
KEY = "Zq9xW3vB7nM2kL5jH8gF4dS6aP1oI0uY+/e=tail"
LABEL = "[REDACTED:OPENAI_API_KEY]"
REDACTOR = SecretRedactor([Secret("OPENAI_API_KEY", KEY)])


def pieces(text: str, width: int = 10) -> list[str]:
    """The `width`-long runs of KEY's common forms still present in `text` (the leak test)."""
    data = KEY.encode()
    forms = [KEY, data.hex(), data.hex().upper(), quote(KEY, safe="")]
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode()
        core = encoded[(8 * offset + 5) // 6 : (8 * (offset + len(data))) // 6]
        forms += [core, core.replace("+", "-").replace("/", "_")]
    return [
        f[i : i + width]
        for f in forms
        for i in range(len(f) - width + 1)
        if f[i : i + width] in text
    ]


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


ENCODINGS = {
    "raw": f"key is {KEY}.",
    "base64": b64(KEY.encode()),
    "base64 with a newline after": b64(KEY.encode() + b"\n"),
    "base64 at offset 1": b64(b"=" + KEY.encode()),
    "base64 at offset 2": b64(b"K=" + KEY.encode() + b"\nmore"),
    "inside a base64 .env": b64(b"OPENAI_API_KEY=" + KEY.encode() + b"\nDEBUG=1\n"),
    "url-safe base64": base64.urlsafe_b64encode(b"xy" + KEY.encode()).decode(),
    "url-safe, unpadded": base64.urlsafe_b64encode(b"x" + KEY.encode()).decode().rstrip("="),
    "hex": KEY.encode().hex(),
    "HEX": KEY.encode().hex().upper(),
    "url-encoded": f"https://x.test/?k={quote(KEY, safe='')}&q=1",
    "url-encoded, lower-case escapes": re.sub(
        "%[0-9A-F]{2}", lambda m: m.group(0).lower(), quote(KEY, safe="")
    ),
    "quote_plus": quote_plus(KEY),
    "every byte escaped": "".join(f"%{b:02X}" for b in KEY.encode()),
    "in JSON": f'{{"env": {{"OPENAI_API_KEY": "{KEY}"}}}}',
}


@pytest.mark.parametrize("text", ENCODINGS.values(), ids=list(ENCODINGS))
def test_each_encoding_is_redacted_without_leaving_a_piece(text: str) -> None:
    out = REDACTOR(text)
    assert LABEL in out
    assert pieces(out) == []


@pytest.mark.parametrize("command", ["base64", "base64 -w 20", "xxd -p", "xxd -p -c 8"])
def test_wrapped_command_output_is_redacted(command: str) -> None:
    """`base64` wraps at 76 columns and `xxd -p` at 60: the key is split over lines."""
    environ = f"HOME=/home/me\nOPENAI_API_KEY={KEY}\nLANG=C\n" * 2
    done = subprocess.run(command.split(), input=environ, capture_output=True, text=True)
    out = REDACTOR(f"exit code 0\n{done.stdout}")
    assert LABEL in out
    assert pieces(out.replace("\n", "")) == []


def test_what_surrounds_a_secret_is_kept() -> None:
    text = f"OPENAI_API_KEY={KEY}\nPATH=/usr/bin\n"
    assert REDACTOR(text) == f"OPENAI_API_KEY={LABEL}\nPATH=/usr/bin\n"


def test_several_secrets_each_keep_their_name() -> None:
    redactor = SecretRedactor(
        [Secret("TELEGRAM_BOT_TOKEN", "123456:AAbbCCddEEff"), Secret("OPENAI_API_KEYS", KEY)]
    )
    text = f"bot 123456:AAbbCCddEEff and pool key {KEY}"
    assert (
        redactor(text)
        == "bot [REDACTED:TELEGRAM_BOT_TOKEN] and pool key [REDACTED:OPENAI_API_KEYS]"
    )
    assert redactor.names == ("OPENAI_API_KEYS", "TELEGRAM_BOT_TOKEN")


def test_a_secret_that_contains_another_is_redacted_whole() -> None:
    redactor = SecretRedactor([Secret("SHORT", "abcdefgh12"), Secret("LONG", "abcdefgh1234567")])
    assert redactor("x abcdefgh1234567 y abcdefgh12 z") == "x [REDACTED:LONG] y [REDACTED:SHORT] z"


def test_values_too_short_to_be_told_apart_from_words_are_not_searched() -> None:
    redactor = SecretRedactor([Secret("TOKEN", "test"), Secret("PIN", "1234567")])
    assert len(redactor) == 0
    assert redactor("a test of 1234567") == "a test of 1234567"


def test_text_without_secrets_is_the_same_object() -> None:
    text = "nothing to see here\n" * 1000
    assert REDACTOR(text) is text
    assert SecretRedactor([Secret("K", KEY)], then=redact)(text) is text


def test_patterns_run_after_the_exact_values() -> None:
    redactor = SecretRedactor([Secret("OPENAI_API_KEY", KEY)], then=redact)
    github = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    assert redactor(f"{KEY} {github}") == f"{LABEL} [REDACTED:github]"


def test_redacting_twice_changes_nothing_more() -> None:
    once = REDACTOR("\n".join(ENCODINGS.values()))
    assert REDACTOR(once) == once

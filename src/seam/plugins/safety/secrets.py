"""Redaction of the exact secrets this process was configured with, in their encodings.

Patterns (redact.py) catch what looks like a key; this catches what IS one: the values of
the API keys, tokens and pool keys the process holds, however a command printed them.
Each value is searched for as itself and as a command line would most often re-encode it:

- base64, standard and url-safe, at each of the three byte offsets a value can have
  inside a longer encoded text (`base64 /proc/self/environ`): only the characters that
  depend on the value's bytes alone are searched for, and the partial character on each
  side (and any `=` padding) is taken with the match;
- hex, lower and upper case (`xxd -p`, `od`-free `hexdump` variants, `.hex()`);
- URL-encoded (`quote`, `quote_plus`, every byte escaped; upper and lower case escapes).

Wrapped encodings (`base64` breaks lines at 76 characters, `xxd -p` at 60) are searched
for again with their line breaks removed.

Speed: every variant of every value goes into one regex, shaped as a trie (values that
share a prefix share its branch), so a text is scanned once however many secrets there
are, and a text with none of them comes back as the same object.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import quote, quote_plus

# Shorter values (and encoded cores) are not searched for: "test" or "1234" would be
# redacted out of every text that happens to contain them.
MIN_SECRET_CHARS = 8

_B64_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
_B64_SET = frozenset(_B64_CHARS)
# A run of base64/hex characters broken over lines (at least two lines of 16 or more).
_WRAPPED_LINE = 16
_WRAPPED = re.compile(
    rf"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{{{_WRAPPED_LINE},}}=*(?:\r?\n[A-Za-z0-9+/_-]+=*)+"
)
_LINE_BREAK = re.compile(r"\r?\n")
_Trie = dict[str, "_Trie"]


@dataclass(frozen=True, slots=True)
class Secret:
    """A value to redact wherever it appears; `name` (e.g. the environment variable it
    came from) labels the redaction, so a reader still knows what was there."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class _Variant:
    label: str
    before: int = 0  # partial base64 characters to take before the match
    after: int = 0  # ... and after it, then any `=` padding
    base64: bool = False


def _label(name: str) -> str:
    kind = re.sub(r"[^\w]+", "_", name).strip("_") or "secret"
    return f"[REDACTED:{kind}]"


def _base64_cores(data: bytes) -> Iterable[tuple[str, int, int]]:
    """For each byte offset 0..2 of `data` inside a longer text, the base64 characters
    that depend on `data` alone, and how many partial characters sit before and after."""
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode("ascii").rstrip("=")
        start_bit, end_bit = 8 * offset, 8 * (offset + len(data))
        first = -(-start_bit // 6)  # the first character wholly inside the value
        last = end_bit // 6  # one past the last such character
        yield encoded[first:last], int(start_bit % 6 != 0), int(end_bit % 6 != 0)


def _url_forms(value: str) -> set[str]:
    escaped_all = "".join(f"%{b:02X}" for b in value.encode("utf-8"))
    forms = {quote(value, safe=""), quote(value), quote_plus(value, safe=""), escaped_all}
    lower = {re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), f) for f in forms}
    return forms | lower


def _variants(secret: Secret) -> dict[str, _Variant]:
    value = secret.value
    label = _label(secret.name)
    data = value.encode("utf-8")
    out: dict[str, _Variant] = {}
    for form in (value, *_url_forms(value), data.hex(), data.hex().upper()):
        out.setdefault(form, _Variant(label))
    for core, before, after in _base64_cores(data):
        variant = _Variant(label, before, after, base64=True)
        out.setdefault(core, variant)
        out.setdefault(core.replace("+", "-").replace("/", "_"), variant)
    return {form: v for form, v in out.items() if len(form) >= MIN_SECRET_CHARS}


def _trie_pattern(words: Iterable[str]) -> str:
    """One regex matching any of `words`, longest first, with shared prefixes merged."""
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}  # end of a word

    def build(node: _Trie) -> str:
        ends = "" in node
        branches = [re.escape(char) + build(child) for char, child in node.items() if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if ends:  # a word ends here, and longer ones go on: try the longer first
            return f"(?:{body})?" if len(branches) == 1 else body[:-1] + ")?"
        return body

    return build(trie)


class SecretRedactor:
    """`redactor(text)`: `text` with each known secret (in any form above) replaced by
    `[REDACTED:<name>]`, then passed through `then` (the pattern redaction)."""

    def __init__(
        self, secrets: Iterable[Secret], *, then: Callable[[str], str] | None = None
    ) -> None:
        variants: dict[str, _Variant] = {}
        for secret in secrets:
            if len(secret.value) >= MIN_SECRET_CHARS:
                for form, variant in _variants(secret).items():
                    variants.setdefault(form, variant)
        self._variants = variants
        self._then = then
        self._pattern: re.Pattern[str] | None = None
        self.names = tuple(sorted({v.label[10:-1] for v in variants.values()}))

    def __len__(self) -> int:
        """How many distinct forms are searched for."""
        return len(self._variants)

    def __call__(self, text: str) -> str:
        out = self._exact(text) if self._variants else text
        if self._then is not None:
            out = self._then(out)
        return text if out == text else out

    def _compiled(self) -> re.Pattern[str]:
        # Compiled on first use: a process that never redacts (most log handlers, most
        # commands) never pays for it.
        if self._pattern is None:
            self._pattern = re.compile(_trie_pattern(self._variants))
        return self._pattern

    def _exact(self, text: str) -> str:
        out = self._replace(text)
        # Wrapped output (a form split over lines) shows when the line breaks are gone.
        if "\n" in out and self._present(out.replace("\r", "").replace("\n", "")):
            out = _WRAPPED.sub(lambda m: self._unwrapped(m.group(0)), out)
        return out

    def _unwrapped(self, block: str) -> str:
        joined = _LINE_BREAK.sub("", block)
        replaced = self._replace(joined)
        return block if replaced is joined else replaced

    def _present(self, text: str) -> bool:
        # A substring test per form runs at memchr speed: for a text holding none of them
        # (nearly every text) it is several times cheaper than one regex scan.
        return any(form in text for form in self._variants)

    def _replace(self, text: str) -> str:
        if not self._present(text):
            return text
        parts: list[str] = []
        done = 0  # text[:done] is in parts
        for match in self._compiled().finditer(text):
            start, end = match.span()
            variant = self._variants[match.group(0)]
            if variant.base64:
                if variant.before and start > done and text[start - 1] in _B64_SET:
                    start -= 1
                if variant.after and end < len(text) and text[end] in _B64_SET:
                    end += 1
                while end < len(text) and text[end] == "=":
                    end += 1
            start = max(start, done)
            parts.append(text[done:start])
            parts.append(variant.label)
            done = end
        if not parts:
            return text
        parts.append(text[done:])
        return "".join(parts)

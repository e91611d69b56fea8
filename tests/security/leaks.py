"""Finding a canary however a command dressed it up.

A hostile command rarely prints a secret as it is: it reverses it (`rev`), cuts it up
(`cut -c`), spaces it out (`sed 's/./& /g'`), dumps it (`od -c`, `xxd`), encodes it
(`base64`, hex) or changes its case, or does two of these in turn. `leaks()` recognises
any run of `WINDOW` characters of a canary in each of those forms (the plain and the
reversed value, each raw, hex or base64, each of those reversed), so a partial leak
counts as a leak. Canaries are random letters and digits, so a chance match of eight of
them is out of the question.
"""

from __future__ import annotations

import base64
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WINDOW = 8  # characters of a canary (or bytes of its encoding) that make a leak
_SPACE = re.compile(r"\s+")
_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]+")
LABEL = "[REDACTED"  # what the redaction second line leaves where it caught a secret


def _windows(text: str, size: int) -> set[str]:
    return {text[i : i + size] for i in range(len(text) - size + 1)}


def _base64_cores(data: bytes) -> Iterator[str]:
    """The characters of `data`'s base64 that depend on its bytes alone, at each offset."""
    for offset in range(3):
        encoded = base64.b64encode(bytes(offset) + data).decode()
        core = encoded[(8 * offset + 5) // 6 : (8 * (offset + len(data))) // 6]
        yield core
        yield core.replace("+", "-").replace("/", "_")


class Canaries:
    """Every form of every canary, ready to be looked for."""

    def __init__(self, named: dict[str, str]) -> None:
        self.named = dict(named)
        # window length -> {window: canary name}; plain windows are compared case-folded.
        self._plain: dict[str, str] = {}
        self._encoded: dict[int, dict[str, str]] = {}
        b64 = (8 * WINDOW + 5) // 6
        for name, value in named.items():
            folded = value.casefold()
            for window in _windows(folded, WINDOW) | _windows(folded[::-1], WINDOW):
                self._plain[window] = name
            for data in (value.encode(), value[::-1].encode()):  # `rev | base64` too
                forms = [(data.hex(), 2 * WINDOW), (data.hex().upper(), 2 * WINDOW)]
                forms += [(core, b64) for core in _base64_cores(data)]
                for form, size in forms:
                    for text in (form, form[::-1]):  # `xxd -p | rev` too
                        for window in _windows(text, size):
                            self._encoded.setdefault(size, {})[window] = name

    def leaks(self, text: str) -> list[str]:
        """The names of the canaries `text` holds a piece of, in any form."""
        found: set[str] = set()
        for variant in (text.casefold(), _NOT_ALNUM.sub("", text).casefold()):
            found |= _scan(variant, WINDOW, self._plain)
        for variant in (text, _SPACE.sub("", text)):
            for size, windows in self._encoded.items():
                found |= _scan(variant, size, windows)
        return sorted(found)


def _scan(text: str, size: int, windows: dict[str, str]) -> set[str]:
    get = windows.get
    return {name for i in range(len(text) - size + 1) if (name := get(text[i : i + size]))}


def strings_in(value: Any) -> Iterator[str]:
    """Every string inside a JSON value (keys too), unescaped."""
    if isinstance(value, str):
        yield value
        try:
            inner = json.loads(value)  # JSON inside a string (tool arguments, event bodies)
        except ValueError:
            return
        if not isinstance(inner, str):
            yield from strings_in(inner)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


def json_text(value: Any) -> str:
    return "\n".join(strings_in(value))


def database_text(path: Path) -> str:
    """Every value of every table of a SQLite file, JSON unpacked, one per line."""
    uri = f"file:{path}?mode=ro"
    out: list[str] = []
    with sqlite3.connect(uri, uri=True) as conn:
        tables = [
            row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):  # names come from sqlite_master
                for value in row:
                    if isinstance(value, bytes):
                        value = value.decode("utf-8", "replace")
                    if isinstance(value, str):
                        out.append(json_text(value))
    return "\n".join(out)

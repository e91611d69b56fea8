"""Which values of an environment are secrets: those whose variable's name says it holds
one (`*_TOKEN`, `*_SECRET`, `*_API_KEY`, `*PASSWORD*`, `*_KEY`, ...: TELEGRAM_BOT_TOKEN,
SLACK_BOT_TOKEN, AWS_SECRET_ACCESS_KEY), and the parts of a value a command could print on
its own (a pool's keys, a PEM key's lines, a URL's password). Wiring adds the names the
settings give (`wiring/secrets.py`); `SecretRedactor` (secrets.py) hides them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from urllib.parse import urlsplit

from seam.plugins.safety.secrets import MIN_SECRET_CHARS, Secret

# Words (between `_`, `-` or `.`) that make a variable's value a secret.
SECRET_WORDS = frozenset(
    {
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "APIKEY",
        "CREDENTIAL",
        "CREDENTIALS",
        "DSN",
        "PAT",
    }
)
# Names whose value is a URL that may carry a password (postgresql://user:pw@host/db).
URL_NAMES = frozenset({"DATABASE_URL", "SEAM_STORE_URL", "REDIS_URL"})
_WORD_SPLIT = re.compile(r"[^A-Z0-9]+")


def is_secret_name(name: str) -> bool:
    """Whether a variable called `name` holds a secret, by what its name says."""
    upper = name.upper()
    words = [w for w in _WORD_SPLIT.split(upper) if w]
    if not words:
        return False
    if SECRET_WORDS.intersection(words):
        return True
    # API_KEY, ACCESS_KEY, PRIVATE_KEY, STRIPE_KEY, OPENAI_API_KEYS; not KEYBOARD_LAYOUT.
    return len(words) > 1 and words[-1] in ("KEY", "KEYS")


def is_secret_variable(name: str) -> bool:
    """Whether a variable's value is redacted: a secret by its name, or a URL that may
    carry a password."""
    return is_secret_name(name) or name.upper() in URL_NAMES


def _looks_like_a_value(value: str) -> bool:
    """Leaves out what redacting everywhere would only damage: short values, numbers,
    booleans, paths and plain lower-case words (`SECRET_BACKEND=keyring`)."""
    if len(value) < MIN_SECRET_CHARS or value.isdigit():
        return False
    if value.startswith(("/", "~", "./")) and " " not in value:
        return False
    return not (value.isalpha() and value.islower() and len(value) < 16)


def _pieces(name: str, value: str) -> Iterator[Secret]:
    """The value, and each part a command could print on its own: the keys of a
    comma-separated pool, the lines of a multi-line value (a PEM key), a URL's password."""
    value = value.strip()
    if "://" in value:
        try:
            password = urlsplit(value).password
        except ValueError:
            password = None
        if password:
            yield Secret(name, password)
        return
    yield Secret(name, value)
    for separator in (",", "\n"):
        if separator in value:
            for part in value.split(separator):
                yield Secret(name, part.strip())


def secrets_in(candidates: Iterable[tuple[str, str]]) -> list[Secret]:
    """The secrets in (name, value) pairs, first name first, without duplicates, empty
    values or values too plain to redact."""
    seen: set[str] = set()
    out: list[Secret] = []
    for name, value in candidates:
        if not value:
            continue
        for secret in _pieces(name, value):
            if secret.value not in seen and _looks_like_a_value(secret.value):
                seen.add(secret.value)
                out.append(secret)
    return out

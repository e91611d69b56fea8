"""What the Settings section hides before a value leaves the server: every secret.

The rules are the ones the logs use (`wiring/secrets.py`: the exact keys this process
holds, in their encodings, then the key patterns of `plugins/safety/redact.py`), plus
what only a configuration holds: an MCP server's `env` values (its child's secrets), a
header that authenticates, any table key whose name says it holds a secret, a URL's
password. A masked value is shown as `MASK` (or with `MASK` in place of the password), and
`PATCH /api/settings` refuses a value carrying it, so a masked placeholder is never
written back over the real secret.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from seam.wiring.secrets import is_secret_name

MASK = "••••••"
# What redaction leaves in a text (plugins/safety/redact.py): never a real value either.
REDACTED = "[REDACTED"
# Header names whose value is a credential, whatever the rest of their name says.
AUTH_WORDS = ("auth", "token", "key", "secret", "cookie", "session", "password")

Redact = Callable[[str], str]


def is_placeholder(value: Any) -> bool:
    """Whether `value` (or any string inside it) is or carries a masked placeholder."""
    if isinstance(value, str):
        return MASK in value or REDACTED in value
    if isinstance(value, dict):
        return any(is_placeholder(v) for v in value.values())
    if isinstance(value, list):
        return any(is_placeholder(v) for v in value)
    return False


def mask_url(text: str) -> str:
    """`text` with a URL's password replaced by `MASK` (anything else is left alone)."""
    if "://" not in text:
        return text
    try:
        parts = urlsplit(text)
        password = parts.password
    except ValueError:
        return text
    if not password:
        return text
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=f"{user}:{MASK}@{host}"))


def _secret_key(key: str, parent: str) -> bool:
    """Whether the value under `key` of a table named `parent` is a secret."""
    if parent == "env":  # an MCP server's child environment: every value
        return True
    lowered = key.lower()
    if lowered.endswith("_env"):  # the name of a variable holding it, not the secret
        return False
    if parent == "headers" and any(word in lowered for word in AUTH_WORDS):
        return True
    return is_secret_name(key)


def mask(value: Any, redact: Redact, parent: str = "") -> Any:
    """`value` (JSON-like) with every secret in it masked."""
    if isinstance(value, str):
        hidden = mask_url(value)
        return hidden if hidden != value else redact(value)
    if isinstance(value, list):
        return [mask(item, redact, parent) for item in value]
    if isinstance(value, dict):
        return {
            k: MASK if _secret_key(k, parent) and v not in ("", None) else mask(v, redact, k)
            for k, v in value.items()
        }
    return value


__all__ = ["MASK", "is_placeholder", "mask", "mask_url"]

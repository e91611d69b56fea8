"""The secrets this process was configured with, and the redactor that keeps them out.

Pattern redaction (plugins/safety/redact.py) knows what keys look like; this module knows
which keys the process actually holds, so their exact values (and their base64, hex and
URL encodings) are redacted from tool results, stored messages, events, exports and logs
even when they look like nothing in particular (a self-hosted endpoint's key, a bot token).

A value counts as a secret when the settings name it (the model's and Anthropic's
`api_key_env` and `api_keys_env`, pool keys one by one, the store URL's password) or when
its variable's name says it holds one (`*_TOKEN`, `*_SECRET`, `*_API_KEY`, `*PASSWORD*`,
`*_KEY`, ...: TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN, DISCORD_BOT_TOKEN, AWS_SECRET_ACCESS_KEY).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from urllib.parse import urlsplit

from seam.plugins.safety.redact import redact
from seam.plugins.safety.secrets import MIN_SECRET_CHARS, Secret, SecretRedactor
from seam.wiring.settings import Settings

Redact = Callable[[str], str]

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


def configured_secrets(settings: Settings) -> list[Secret]:
    """Every secret value the settings and their environment hold, strongest name first
    (the one the settings give it), without duplicates or values too plain to redact."""
    env = settings.env
    model, anthropic = settings.config.model, settings.config.anthropic
    named = [model.api_key_env, model.api_keys_env, anthropic.api_key_env, anthropic.api_keys_env]
    candidates: list[tuple[str, str]] = [(n, env.get(n, "")) for n in named]
    if settings.api_key:
        candidates.append((model.api_key_env, settings.api_key))
    if settings.store_url:
        candidates.append(("SEAM_STORE_URL", settings.store_url))
    candidates += [(n, v) for n, v in env.items() if is_secret_name(n) or n.upper() in URL_NAMES]
    return _unique(s for name, value in candidates if value for s in _pieces(name, value))


def _unique(secrets: Iterable[Secret]) -> list[Secret]:
    seen: set[str] = set()
    out: list[Secret] = []
    for secret in secrets:
        if secret.value not in seen and _looks_like_a_value(secret.value):
            seen.add(secret.value)
            out.append(secret)
    return out


def secret_redactor(settings: Settings | None) -> Redact:
    """What the loop, the event log and the logs redact with: the exact configured secrets
    (in their encodings), then the patterns. Without settings (an instrumented runtime
    that reads no environment), the patterns alone."""
    if settings is None:
        return redact
    secrets = configured_secrets(settings)
    return SecretRedactor(secrets, then=redact) if secrets else redact


def redactor_for_env(env: Mapping[str, str]) -> Redact:
    """`secret_redactor` for the settings `env` describes; when they cannot be read (a
    bad config file, which the command reports itself), the environment's secrets alone."""
    from pathlib import Path

    from seam.wiring.settings import ConfigError, load_settings

    try:
        settings = load_settings(env)
    except (ConfigError, OSError):
        settings = Settings(home=Path("/nonexistent"), working_dir=Path("/"), env=dict(env))
    return secret_redactor(settings)

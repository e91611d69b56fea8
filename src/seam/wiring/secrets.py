"""The secrets this process was configured with, and the redactor that keeps them out.

Pattern redaction (plugins/safety/redact.py) knows what keys look like; this module knows
which keys the process actually holds, so their exact values (and their base64, hex and
URL encodings) are redacted from tool results, stored messages, events, exports and logs
even when they look like nothing in particular (a self-hosted endpoint's key, a bot token).

A value counts as a secret when the settings name it (the model's and Anthropic's
`api_key_env` and `api_keys_env`, `[web_search] api_key_env`, pool keys one by one, the
store URL's password) or when its variable's name says it holds one (`*_TOKEN`,
`*_SECRET`, `*_API_KEY`, `*PASSWORD*`, `*_KEY`, ...: TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN,
DISCORD_BOT_TOKEN, AWS_SECRET_ACCESS_KEY; the rule is plugins/safety/secret_names.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from seam.plugins.safety.redact import redact
from seam.plugins.safety.secret_names import is_secret_name, is_secret_variable, secrets_in
from seam.plugins.safety.secrets import Secret, SecretRedactor
from seam.wiring.settings import Settings

Redact = Callable[[str], str]

__all__ = ["configured_secrets", "is_secret_name", "redactor_for_env", "secret_redactor"]


def configured_secrets(settings: Settings) -> list[Secret]:
    """Every secret value the settings and their environment hold, strongest name first
    (the one the settings give it), without duplicates or values too plain to redact."""
    env = settings.env
    model, anthropic = settings.config.model, settings.config.anthropic
    named = [model.api_key_env, model.api_keys_env, anthropic.api_key_env, anthropic.api_keys_env]
    named.append(settings.config.web_search.key_env)  # "" when no search key is used
    candidates: list[tuple[str, str]] = [(n, env.get(n, "")) for n in named]
    if settings.api_key:
        candidates.append((model.api_key_env, settings.api_key))
    if settings.store_url:
        candidates.append(("SEAM_STORE_URL", settings.store_url))
    candidates += [(n, v) for n, v in env.items() if is_secret_variable(n)]
    return secrets_in(candidates)


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

"""The `[web]` config section, and where `seam serve`'s keys and cookie secret live in
`$SEAM_HOME` (the keys themselves are handled by `apps/web/keys.py`)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from seam.wiring.settings import ConfigError, Settings, section_or_defaults
from seam.wiring.tenant_dirs import OWNER_TENANT

KEYS_FILE = "keys.json"
DEFAULT_TENANT = OWNER_TENANT  # the owner is the default tenant (wiring/tenant_dirs.py)


class WebSection(BaseModel):
    """`[web]` in config.toml (every key optional)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)  # see section_or_defaults

    # Origins allowed to call the API from a browser; empty: CORS stays off.
    cors_origins: list[str] = Field(default_factory=list)
    # Largest request body accepted, in bytes.
    max_body_bytes: int = Field(1_048_576, gt=0)
    # Requests per minute per key (a burst of as many is allowed).
    rate_limit: int = Field(600, gt=0)
    # Requests per minute per tenant, over all its keys and page sessions together.
    tenant_rate_limit: int = Field(1200, gt=0)
    # Seconds a client may take to send a request's head before it is disconnected.
    header_timeout_seconds: float = Field(10.0, gt=0)
    # Seconds an open connection may sit idle between requests before it is closed.
    idle_timeout_seconds: float = Field(5.0, gt=0)
    # Seconds between heartbeat comments on an idle event stream.
    heartbeat_seconds: float = Field(15.0, gt=0)


def web_section(settings: Settings) -> WebSection:
    raw: dict[str, Any] = getattr(settings.config, "web", {}) or {}
    try:
        return section_or_defaults(WebSection, raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise ConfigError(f"{settings.config_path}: [web] {where}: {problem['msg']}") from None


def keys_path(settings: Settings) -> Path:
    """Where the API keys of this home live (`apps/web/keys.py` reads and writes them)."""
    return settings.home / KEYS_FILE


SECRET_FILE = "web-secret"


def web_secret(settings: Settings) -> bytes:
    """The key that signs the page's session cookies, shared by every `seam serve` of this
    home (created on first use, readable by its owner only)."""
    path = settings.home / SECRET_FILE
    try:
        return bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (FileNotFoundError, ValueError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_bytes(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secret.hex() + "\n")
    return secret


__all__ = [
    "DEFAULT_TENANT",
    "KEYS_FILE",
    "SECRET_FILE",
    "WebSection",
    "keys_path",
    "web_secret",
    "web_section",
]

"""What the dashboard's routes are given: the backend (the Runtime, sessions, streams),
the loaded settings (the home folder and `config.toml`) and the API keys.

Settings are None when an app is built without a home (some in-process tests); a section
that needs them answers 503 with one line instead of guessing a folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from seam.apps.web.auth import Principal
from seam.apps.web.errors import ApiError

if TYPE_CHECKING:
    from seam.apps.web.backend import WebBackend
    from seam.apps.web.keys import KeyStore
    from seam.wiring.settings import Settings


@dataclass(eq=False)
class Control:
    """The dashboard's collaborators, built once per app by `create_app`."""

    backend: WebBackend
    settings: Settings | None = None
    keys: KeyStore | None = None

    def need_settings(self) -> Settings:
        if self.settings is None:
            raise ApiError(503, "this server was started without a home folder")
        return self.settings

    def need_keys(self) -> KeyStore:
        if self.keys is None:
            raise ApiError(503, "this server was started without a key store")
        return self.keys


def owner_only(who: Principal, why: str) -> None:
    """Refuse (403) anyone but the owner, saying why. `access.OWNER_PREFIXES` already
    refuses whole owner-only sections; this is for one action inside a shared one."""
    if not who.owner:
        raise ApiError(403, why)


__all__ = ["Control", "owner_only"]

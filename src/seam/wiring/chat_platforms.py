"""The chat platforms `seam gateway` knows: one line per platform.

Each platform's module exports a `ChatPlatform` (contracts/chat.py) saying everything
wiring needs: its `[gateway.<name>]` model, its adapter builder, its token variables and
its submission-id prefix. The gateway's settings, adapter start-up, `seam doctor`, the
delivery targets and the submission ids all iterate this registry, so adding a platform
is its module plus one line in `CHAT_PLATFORMS`. Importing a platform's module here is
cheap: its SDK is imported only when its adapter is built.
"""

from __future__ import annotations

from seam.contracts.chat import ChatPlatform
from seam.plugins.chat.discord import DISCORD
from seam.plugins.chat.slack import SLACK
from seam.plugins.chat.telegram import TELEGRAM

# In the order `[gateway]`'s tables are documented and started.
CHAT_PLATFORMS: tuple[ChatPlatform, ...] = (
    TELEGRAM,
    SLACK,
    DISCORD,
)


def chat_platforms() -> dict[str, ChatPlatform]:
    """The registered platforms by name, in registration order (read at call time, so a
    test that registers a platform of its own sees it everywhere)."""
    return {platform.name: platform for platform in CHAT_PLATFORMS}


def platform_names() -> tuple[str, ...]:
    return tuple(platform.name for platform in CHAT_PLATFORMS)


def id_prefix(name: str) -> str:
    """The submission-id prefix of platform `name` ("tg"); an unknown one uses its name."""
    platform = chat_platforms().get(name)
    return platform.id_prefix if platform is not None else name


__all__ = ["CHAT_PLATFORMS", "ChatPlatform", "chat_platforms", "id_prefix", "platform_names"]

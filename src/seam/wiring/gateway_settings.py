"""`[gateway]` in config.toml: which chat platforms `seam gateway` runs, who may talk to
the agent, and where alerts go. The keys are public (issue #14):

```toml
[gateway]
owner = "telegram:123456789"      # where alerts, cron output and heartbeats go by default
alert_after = "10m"               # tell the owner when an adapter is down this long
[gateway.telegram]
token_env = "TELEGRAM_BOT_TOKEN"
base_url = ""                     # a self-hosted Bot API server (tests point it at loopback)
allow = ["123456789"]             # user ids that may talk to the agent without pairing
[gateway.slack]
bot_token_env = "SLACK_BOT_TOKEN"
app_token_env = "SLACK_APP_TOKEN" # Socket Mode
base_url = ""
allow = []
[gateway.discord]
token_env = "DISCORD_BOT_TOKEN"
allow = []
```

A platform runs when its table is present; tokens live in the environment, never here.
The platform tables are those of the registered platforms (`wiring/chat_platforms.py`),
each validated by the model its platform module exports.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model, field_validator

from seam.contracts.chat import ChatPlatform
from seam.plugins.chat.discord import DiscordSection
from seam.plugins.chat.slack import SlackSection
from seam.plugins.chat.telegram import TelegramSection
from seam.wiring import chat_platforms
from seam.wiring.settings import ConfigError, Settings, parse_duration

# Seconds an adapter may be down before the owner is told (`alert_after`'s default).
DEFAULT_ALERT_AFTER = "10m"
# Pairing codes kept waiting per platform (`max_pending_pairings`'s default).
DEFAULT_MAX_PENDING_PAIRINGS = 100


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")


class GatewaySection(_Table):
    # A chat ("telegram:<chat>", "slack:<channel>", ...) for alerts, cron output and
    # heartbeats; "" = none.
    owner: str = ""
    alert_after: str = DEFAULT_ALERT_AFTER
    # Pairing codes waiting for approval per platform; past it the oldest is dropped.
    max_pending_pairings: int = Field(DEFAULT_MAX_PENDING_PAIRINGS, gt=0)
    # The platform tables: one optional field per registered platform, added by
    # `gateway_model` (this class alone has none).
    platform_names: ClassVar[tuple[str, ...]] = ()

    @field_validator("alert_after")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value

    @field_validator("owner")
    @classmethod
    def _owner(cls, value: str) -> str:
        value = value.strip()
        if value and ":" not in value:
            raise ValueError(f'must name a platform and a chat, like "telegram:123", not {value!r}')
        return value

    @property
    def alert_after_seconds(self) -> float:
        return parse_duration(self.alert_after)

    def platforms(self) -> dict[str, Any]:
        """The configured platforms' tables by name, in registration order."""
        found: dict[str, Any] = {}
        for name in self.platform_names:
            table = getattr(self, name, None)
            if table is not None:
                found[name] = table
        return found

    def allowed(self, platform: str) -> frozenset[str]:
        """User ids that need no pairing on `platform`: its `allow` list, plus the owner's
        chat when that is a private chat on this platform (its id is the user's)."""
        table = self.platforms().get(platform)
        ids = set(table.allow) if table is not None else set()
        if self.owner.startswith(f"{platform}:"):
            ids.add(self.owner.split(":")[1])
        return frozenset(ids)


@functools.cache
def _model_for(platforms: tuple[ChatPlatform, ...]) -> type[GatewaySection]:
    fields: dict[str, Any] = {p.name: (p.section | None, None) for p in platforms}
    model: type[GatewaySection] = create_model(
        "GatewaySection", __base__=GatewaySection, __module__=__name__, **fields
    )
    model.platform_names = tuple(fields)
    return model


def gateway_model() -> type[GatewaySection]:
    """`[gateway]`'s model: `owner`, `alert_after`, and a table per registered platform
    (`wiring/chat_platforms.py`), each validated by the platform's own model."""
    return _model_for(chat_platforms.CHAT_PLATFORMS)


def gateway_section(settings: Settings) -> GatewaySection:
    raw: dict[str, Any] = getattr(settings.config, "gateway", {}) or {}
    try:
        return gateway_model().model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise ConfigError(f"{settings.config_path}: [gateway] {where}: {problem['msg']}") from None


__all__ = [
    "DiscordSection",
    "GatewaySection",
    "SlackSection",
    "TelegramSection",
    "gateway_model",
    "gateway_section",
]

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
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from seam.wiring.settings import ConfigError, Settings, parse_duration

# Seconds an adapter may be down before the owner is told (`alert_after`'s default).
DEFAULT_ALERT_AFTER = "10m"


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")


class TelegramSection(_Table):
    token_env: str = "TELEGRAM_BOT_TOKEN"
    # A self-hosted Bot API server ("" = api.telegram.org).
    base_url: str = ""
    # User ids that may talk to the agent without pairing.
    allow: list[str] = Field(default_factory=list)

    @field_validator("allow", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return _ids_as_text(value)


class SlackSection(_Table):
    bot_token_env: str = "SLACK_BOT_TOKEN"
    app_token_env: str = "SLACK_APP_TOKEN"  # Socket Mode
    base_url: str = ""  # the Web API's base URL ("" = slack.com/api/)
    allow: list[str] = Field(default_factory=list)

    @field_validator("allow", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return _ids_as_text(value)


class DiscordSection(_Table):
    token_env: str = "DISCORD_BOT_TOKEN"
    allow: list[str] = Field(default_factory=list)
    # A REST base and gateway URL of another server (tests, self-hosting); "" = Discord's.
    base_url: str = ""
    gateway_url: str = ""

    @field_validator("allow", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        return _ids_as_text(value)


class GatewaySection(_Table):
    # A chat ("telegram:<chat>", "slack:<channel>", ...) for alerts, cron output and
    # heartbeats; "" = none.
    owner: str = ""
    alert_after: str = DEFAULT_ALERT_AFTER
    telegram: TelegramSection | None = None
    slack: SlackSection | None = None
    discord: DiscordSection | None = None

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

    def platforms(self) -> dict[str, TelegramSection | SlackSection | DiscordSection]:
        """The configured platforms by name, in a fixed order."""
        found: dict[str, TelegramSection | SlackSection | DiscordSection] = {}
        for name in ("telegram", "slack", "discord"):
            table = getattr(self, name)
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


def _ids_as_text(value: Any) -> Any:
    """`allow = [123456789]` (numbers, as ids are) is as good as the quoted form."""
    if isinstance(value, list):
        return [str(item) if isinstance(item, int) else item for item in value]
    return value


def gateway_section(settings: Settings) -> GatewaySection:
    raw: dict[str, Any] = getattr(settings.config, "gateway", {}) or {}
    try:
        return GatewaySection.model_validate(raw)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(p) for p in problem["loc"])
        raise ConfigError(f"{settings.config_path}: [gateway] {where}: {problem['msg']}") from None


__all__ = [
    "DiscordSection",
    "GatewaySection",
    "SlackSection",
    "TelegramSection",
    "gateway_section",
]

"""Settings: `$SEAM_HOME/config.toml` plus environment overrides.

The only module that reads the environment and the home directory. Each concern keeps
its own section model (`ModelSection`, `LocalSection`, `AgentSection`, `StoreSection`),
and a bad file is reported with the file, the key and what was wrong, never ignored.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from seam.wiring.delivery_settings import DndSection, HeartbeatSection
from seam.wiring.durations import parse_duration as parse_duration  # re-exported
from seam.wiring.telemetry import TelemetrySection

SectionT = TypeVar("SectionT", bound=BaseModel)

DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"


class ConfigError(Exception):
    """The config file or an environment variable is invalid; the message says where."""


class _Section(BaseModel):
    # Built on first validation (reading a config file builds `ConfigFile`'s, sections and
    # all), and defaults are made with `model_construct` (a default is valid as written):
    # a run without a config file builds no validator (much of `seam run`'s start-up).
    model_config = ConfigDict(extra="forbid", defer_build=True)


ProviderKind = Literal["openai", "anthropic", "local"]


class ModelSection(_Section):
    # auto: an OpenAI-compatible endpoint when one is configured, then Anthropic when its
    # key is set, else the local model.
    provider: Literal["auto", "openai", "anthropic", "local"] = "auto"
    base_url: str = ""
    model: str = ""
    # The environment variable holding the key (keys never live in the config file), and
    # the one holding a comma-separated pool of keys.
    api_key_env: str = "OPENAI_API_KEY"
    api_keys_env: str = "OPENAI_API_KEYS"
    max_context_tokens: int = Field(128_000, gt=0)
    # Seconds. `timeout`: the deadline of one model request, retries included;
    # `connect_timeout`: reaching the server; `idle_timeout`: the longest wait for the
    # next streamed event (a trickling or keep-alive-only server counts as silent).
    timeout: float = Field(600.0, gt=0)
    connect_timeout: float = Field(5.0, gt=0)
    idle_timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)
    # Provider refs ("anthropic:claude-haiku-4-5", "openai:gpt-4o-mini", "local") tried in
    # order when the primary fails.
    fallback: list[str] = Field(default_factory=list)


class AnthropicSection(_Section):
    base_url: str = "https://api.anthropic.com"
    model: str = "claude-sonnet-4-5"
    api_key_env: str = "ANTHROPIC_API_KEY"
    api_keys_env: str = "ANTHROPIC_API_KEYS"
    max_tokens: int = Field(8192, gt=0)
    thinking_budget: int = Field(0, ge=0)  # 0: extended thinking off
    max_context_tokens: int = Field(200_000, gt=0)
    # As in [model].
    timeout: float = Field(600.0, gt=0)
    connect_timeout: float = Field(5.0, gt=0)
    idle_timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(3, ge=0)


class PoolSection(_Section):
    strategy: Literal["fill_first", "round_robin", "least_used"] = "fill_first"
    rate_limit_cooldown: float = Field(60.0, ge=0)
    auth_cooldown: float = Field(24 * 3600.0, ge=0)


class SideModelsSection(_Section):
    """Cheaper models for side tasks; each is a provider ref, empty = the main model."""

    default: str = ""
    titles: str = ""
    compression: str = ""
    approvals: str = ""
    reflection: str = ""


class LocalSection(_Section):
    model_path: str = ""  # empty: the bundled SmolLM2-135M-Instruct
    n_ctx: int = Field(8192, ge=512)
    threads: int = Field(0, ge=0)  # 0: let llama.cpp decide
    max_tokens: int = Field(512, gt=0)


class AgentSection(_Section):
    personality: str = "default"
    max_iterations: int = Field(25, gt=0)
    result_budget_chars: int = Field(80_000, gt=0)
    streaming_timeout: float = Field(120.0, gt=0)
    # Seconds one turn (every model call and tool run in it) may take before it is
    # stopped; `seam run --timeout` / `seam chat --timeout` override it. 0: no limit.
    turn_timeout: float = Field(1800.0, ge=0)


class BudgetSection(_Section):
    """Spending limits on tokens and cost, checked before each model call (docs/budgets.md).
    A personality's own `[budget]` and a cron job's `--max-tokens` / `--max-usd` add
    their own; the tightest limit that applies wins."""

    session_tokens: int = Field(0, ge=0)  # tokens (input plus output) a session; 0: no limit
    session_usd: float = Field(0.0, ge=0)  # cost in USD a session (priced models); 0: none
    day_tokens: int = Field(0, ge=0)  # tokens a day, all sessions (midnight in `tz`); 0: none
    day_usd: float = Field(0.0, ge=0)  # cost in USD a day, all sessions; 0: no limit
    job_tokens: int = Field(0, ge=0)  # tokens a cron job run (a heartbeat too); 0: no limit
    job_usd: float = Field(0.0, ge=0)  # cost in USD a cron job run; 0: no limit
    # The IANA time zone whose midnight starts the day ("Europe/Paris"); "": local time.
    tz: str = ""

    @field_validator("tz")
    @classmethod
    def _zone(cls, value: str) -> str:
        if value:
            from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {value!r} (an IANA name)") from None
        return value

    def limited(self) -> bool:
        """Whether any limit is set here."""
        return any(
            getattr(self, f"{p}_{u}") for p in ("session", "day", "job") for u in ("tokens", "usd")
        )


class ContextSection(_Section):
    """The context window: prompt assembly, compaction thresholds (core/context*)."""

    window: int = Field(0, ge=0)  # tokens; 0: the model's own max_context_tokens
    compress_at: float = Field(0.75, ge=0, le=1)  # share of the window; 0: never compress
    warn_at: float = Field(0.85, ge=0, le=1)  # share of the window; 0: never warn
    protect_first: int = Field(3, ge=0)  # messages a summary never replaces...
    protect_last: int = Field(20, ge=1)  # ...at the start and at the end
    # Project files in the working directory added to the system prompt, each capped.
    files: list[str] = Field(default_factory=lambda: ["AGENTS.md"])
    max_file_chars: int = Field(20_000, gt=0)


class RecallSection(_Section):
    """Whether memory and session search add local embeddings to full text
    (services/recall)."""

    # false: full-text search only, as without the `recall` extra.
    enabled: bool = True
    # Messages embedded per step of the indexer (one worker-thread call each).
    batch_size: int = Field(256, ge=1, le=10_000)
    # How close (cosine) a message must be to the query for meaning alone to find it.
    min_similarity: float = Field(0.2, ge=-1.0, le=1.0)
    # How often `seam serve` and `seam gateway` index new messages (`seam chat` does
    # while the person types).
    index_every: str = "1m"

    @field_validator("index_every")
    @classmethod
    def _every(cls, value: str) -> str:
        if parse_duration(value) <= 0:
            raise ValueError(f"must be a duration like 30s or 5m, got {value!r}")
        return value

    @property
    def index_every_seconds(self) -> float:
        return parse_duration(self.index_every)


class ReflectionSection(_Section):
    """After each turn, a background review that may add memory entries (off by default:
    it costs a model call per turn). Its model is `[side_models] reflection`."""

    enabled: bool = False
    max_entries: int = Field(3, ge=1, le=10)


class StoreSection(_Section):
    path: str = "sessions.db"  # relative to SEAM_HOME
    # postgresql://user:pass@host/db: share sessions and the submission queue between
    # workers on several machines (SEAM_STORE_URL overrides it). Unset: SQLite at `path`.
    url: str | None = None
    # Seconds a worker holds a submission between renewals before another may take it.
    lease_seconds: float = Field(30.0, gt=0)
    max_attempts: int = Field(10, gt=0)

    @field_validator("url")
    @classmethod
    def _postgres_only(cls, url: str | None) -> str | None:
        return check_store_url(url) if url else None


class SessionsSection(_Section):
    # A session with no activity for this long is ended (so `seam sessions prune` can
    # delete it later); checked whenever a runtime opens. "" or "0": never.
    idle_end: str = "24h"

    @field_validator("idle_end")
    @classmethod
    def _duration(cls, value: str) -> str:
        parse_duration(value)
        return value

    @property
    def idle_end_seconds(self) -> float:
        return parse_duration(self.idle_end)


class SandboxSection(_Section):
    # auto / bwrap: bubblewrap; where it cannot run, commands are refused (never run
    # unsandboxed unasked). local: plain subprocesses, no isolation (chosen explicitly).
    backend: Literal["auto", "local", "bwrap"] = "auto"
    # Constraints in `Annotated`, defaults plain: mypy then sees each key as optional.
    timeout: Annotated[float, Field(gt=0)] = 180.0
    # Per command (services/sandbox/limits.py); 0 turns one off.
    memory_mb: Annotated[int, Field(ge=0)] = 2048
    max_processes: Annotated[int, Field(ge=0)] = 256
    max_file_mb: Annotated[int, Field(ge=0)] = 1024
    cpu_seconds: Annotated[int, Field(ge=0)] = 300
    # `network = true` reaches public addresses only (services/sandbox/egress.py); hosts
    # or host:port listed here pass although they are loopback or private.
    network_allow: list[str] = Field(default_factory=list)


class McpToolsFilter(_Section):
    allow: list[str] = Field(default_factory=list)  # globs; empty: every tool
    deny: list[str] = Field(default_factory=list)  # globs; wins over allow


class McpServerSection(_Section):
    """`[mcp.servers.NAME]`: `command` (argv, stdio) or `url` (Streamable HTTP). `env`
    and `headers` values expand `$VAR` / `${VAR}` from Seam's environment; the child gets
    only the listed `env` (plus the SDK's PATH, HOME, USER, SHELL, TERM, LOGNAME)."""

    command: list[str] | None = Field(None, min_length=1)
    url: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    headers: dict[str, str] = Field(default_factory=dict)
    tools: McpToolsFilter = McpToolsFilter.model_construct()
    approval: Literal["always", "never", "auto"] = "auto"
    connect_timeout: float = Field(60.0, gt=0)  # seconds to start and list the tools
    call_timeout: float = Field(120.0, gt=0)  # seconds one tool call may take
    cwd: str | None = None

    @field_validator("url")
    @classmethod
    def _http_only(cls, url: str | None) -> str | None:
        if url is not None and not url.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {url!r}")
        return url

    def model_post_init(self, context: Any) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (stdio) or url (Streamable HTTP)")


class McpSection(_Section):
    servers: dict[str, McpServerSection] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _names(cls, servers: dict[str, McpServerSection]) -> dict[str, McpServerSection]:
        for name in servers:
            if not name or not all(c.isascii() and (c.isalnum() or c in "-_") for c in name):
                raise ValueError(f"server name {name!r}: use letters, digits, - and _")
            if "__" in name:
                raise ValueError(f"server name {name!r}: '__' separates mcp__<server>__<tool>")
        return servers


class SkillsSection(_Section):
    """Agent Skills (plugins/skills): extra folders searched after
    `<working dir>/.agents/skills` and `$SEAM_HOME/skills`, and the index's budget."""

    dirs: list[str] = Field(default_factory=list)  # `~` expanded; relative to SEAM_HOME
    index_chars: int = Field(3_000, ge=200)  # the system prompt's skills index, at most


class NetworkSection(_Section):
    """Where requests a model or a job can steer may go (contracts/addresses.py)."""

    # Webhook deliveries, `web_fetch` and MCP servers added at run time (over ACP) refuse
    # loopback, link-local, private, CGNAT and other non-public addresses; hosts,
    # host:port, addresses or networks ("10.0.0.0/8") listed here pass: the owner's own.
    allow_private: list[str] = Field(default_factory=list)


class WebSearchSection(_Section):
    """The `web_search` tool's provider (off unless configured; docs/web-search.md)."""

    # "": no `web_search` tool at all. searxng: an instance at `url`, no key. brave and
    # tavily: keyed APIs, their key in the variable `api_key_env` names.
    provider: Literal["", "searxng", "brave", "tavily"] = ""
    # The SearXNG instance's root; for brave and tavily an override of their API root
    # (a proxy, or a test's fake). May be a private address: the owner chose it.
    url: str = ""
    # The environment variable holding the key (keys never live in the config file);
    # "" picks the provider's usual name: BRAVE_API_KEY, TAVILY_API_KEY.
    api_key_env: str = ""
    max_results: int = Field(10, ge=1, le=10)  # the most one search returns
    timeout: float = Field(15.0, gt=0)  # seconds one search may take

    @field_validator("url")
    @classmethod
    def _http_only(cls, url: str) -> str:
        if url and not url.startswith(("http://", "https://")):
            raise ValueError(f"must start with http:// or https://, got {url!r}")
        return url

    def model_post_init(self, context: Any) -> None:
        if self.provider == "searxng" and not self.url:
            raise ValueError("url: the searxng provider needs the instance's URL")

    @property
    def key_env(self) -> str:
        """The variable the provider's key is read from ("" for a provider with none)."""
        if self.provider in ("", "searxng"):
            return ""
        return self.api_key_env or f"{self.provider.upper()}_API_KEY"


class ConfigFile(_Section):
    model: ModelSection = ModelSection.model_construct()
    anthropic: AnthropicSection = AnthropicSection.model_construct()
    pool: PoolSection = PoolSection.model_construct()
    side_models: SideModelsSection = SideModelsSection.model_construct()
    local: LocalSection = LocalSection.model_construct()
    agent: AgentSection = AgentSection.model_construct()
    context: ContextSection = ContextSection.model_construct()
    reflection: ReflectionSection = ReflectionSection.model_construct()
    store: StoreSection = StoreSection.model_construct()
    sandbox: SandboxSection = SandboxSection.model_construct()
    sessions: SessionsSection = SessionsSection.model_construct()
    mcp: McpSection = McpSection.model_construct()
    skills: SkillsSection = SkillsSection.model_construct()
    dnd: DndSection = DndSection.model_construct()  # quiet hours (wiring/delivery_settings.py)
    heartbeat: HeartbeatSection = HeartbeatSection.model_construct()
    telemetry: TelemetrySection = TelemetrySection.model_construct()
    network: NetworkSection = NetworkSection.model_construct()
    recall: RecallSection = RecallSection.model_construct()
    web_search: WebSearchSection = WebSearchSection.model_construct()
    budget: BudgetSection = BudgetSection.model_construct()
    # Validated by their owners: wiring/guard.py (allow/deny rules) and wiring/pricing.py
    # (`[prices.<model>] input = .., output = ..` in USD per million tokens).
    guard: dict[str, Any] = Field(default_factory=dict)
    prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    # `seam serve`: validated by wiring/web_keys.py (cors_origins, limits).
    web: dict[str, Any] = Field(default_factory=dict)
    # `seam gateway`: validated by wiring/gateway_settings.py (platforms, owner, allow lists).
    gateway: dict[str, Any] = Field(default_factory=dict)
    # Undo: validated by wiring/checkpoints.py (enabled, max_file_mb, ignore, budget_mb).
    checkpoints: dict[str, Any] = Field(default_factory=dict)


@dataclass(frozen=True)
class Settings:
    home: Path
    config: ConfigFile = field(default_factory=ConfigFile.model_construct)
    working_dir: Path = field(default_factory=Path.cwd)
    # Resolved from the environment and flags:
    api_key: str | None = None
    base_url: str | None = None
    model_override: str | None = None
    # The environment the settings were read from (keys for other providers, key pools).
    env: Mapping[str, str] = field(default_factory=dict, repr=False)

    @property
    def config_path(self) -> Path:
        return self.home / "config.toml"

    @property
    def store_path(self) -> Path:
        path = Path(self.config.store.path).expanduser()
        return path if path.is_absolute() else self.home / path

    @property
    def store_url(self) -> str | None:
        """The PostgreSQL store's URL (SEAM_STORE_URL wins over `[store] url`), or None."""
        return self.env.get("SEAM_STORE_URL") or self.config.store.url

    @property
    def personalities_dir(self) -> Path:
        return self.home / "personalities"

    @property
    def provider(self) -> ProviderKind:
        chosen = self.config.model.provider
        if chosen != "auto":
            return chosen
        if self.api_key or self.base_url or self.config.model.base_url:
            return "openai"
        if self.env.get(self.config.model.api_keys_env):
            return "openai"
        anthropic = self.config.anthropic
        if self.env.get(anthropic.api_key_env) or self.env.get(anthropic.api_keys_env):
            return "anthropic"
        return "local"


def check_store_url(url: str) -> str:
    """`url` when a registered store backend takes its scheme (`wiring/store_backends.py`),
    else ValueError naming the schemes."""
    from seam.wiring.store_backends import backend_for

    backend_for(url)
    return url


def seam_home(env: Mapping[str, str]) -> Path:
    raw = env.get("SEAM_HOME", "").strip()
    return Path(raw).expanduser().resolve() if raw else Path.home() / ".seam"


def home_from_environment() -> Path:
    """SEAM_HOME as this process's environment names it (for messages about it)."""
    return seam_home(os.environ)


def read_config(path: Path) -> ConfigFile:
    if not path.exists():
        return ConfigFile.model_construct()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} at offset"
            f" {exc.start}); config.toml must be a UTF-8 TOML file: fix or remove it"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}; fix it or remove it") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return ConfigFile.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {validation_problems(exc)}") from None


def section_or_defaults(model: type[SectionT], raw: Mapping[str, Any] | None) -> SectionT:
    """`raw` validated as `model`; an empty or missing section is the defaults, made
    without building the model's validator (a deferred model: see `_Section`)."""
    return model.model_validate(raw) if raw else model.model_construct()


def validation_problems(exc: ValidationError, limit: int | None = None, whole: str = "") -> str:
    """What pydantic refused, one `key.path: message` a problem, on one line (the first
    `limit` of them); `whole` names a problem with the whole section (an empty path)."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or whole}: {err['msg']}"
        for err in exc.errors()[:limit]
    )


def load_settings(
    env: Mapping[str, str] | None = None,
    *,
    home: Path | None = None,
    model: str | None = None,
    working_dir: Path | None = None,
) -> Settings:
    """Settings from the config file, overridden by the environment, overridden by flags."""
    env = os.environ if env is None else env
    home = home or seam_home(env)
    config = read_config(home / "config.toml")
    api_key = env.get(config.model.api_key_env) or None
    base_url = env.get("OPENAI_BASE_URL") or None
    if base_url is not None and not base_url.startswith(("http://", "https://")):
        raise ConfigError(f"OPENAI_BASE_URL must start with http:// or https://, got {base_url!r}")
    store_url = env.get("SEAM_STORE_URL")
    if store_url:
        try:
            check_store_url(store_url)
        except ValueError as exc:
            raise ConfigError(f"SEAM_STORE_URL {exc}") from None
    return Settings(
        home=home,
        config=config,
        working_dir=(working_dir or Path.cwd()).resolve(),
        api_key=api_key,
        base_url=base_url,
        model_override=model or env.get("SEAM_MODEL") or None,
        env=dict(env),
    )

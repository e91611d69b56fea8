"""Picks and builds the model providers the settings ask for.

A provider ref names one: `openai:gpt-4o-mini`, `anthropic:claude-haiku-4-5`, `local`, or
a bare model name (the configured provider with that model). Several keys for one
provider (`OPENAI_API_KEYS=a,b,c`) become a credential pool; `fallback` refs become a
chain tried in order. Built providers are cached, so a personality that names the same
model as another shares its connection pool (and the local model is loaded once).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from seam.contracts.model import (
    ModelCapabilities,
    ModelChunk,
    ModelProvider,
    ModelRequest,
    OnRetry,
)
from seam.contracts.personality import Personality
from seam.core.read_through import ReadThrough
from seam.wiring.settings import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_MODEL,
    AnthropicSection,
    ConfigError,
    ModelSection,
    ProviderKind,
    Settings,
)

if TYPE_CHECKING:
    import httpx

LOCAL_SETUP_HINT = (
    "run scripts/bootstrap to install the offline model, or configure a provider: "
    "set OPENAI_API_KEY (and OPENAI_BASE_URL for any OpenAI-compatible server) or "
    "ANTHROPIC_API_KEY"
)
KINDS: tuple[ProviderKind, ...] = ("openai", "anthropic", "local")
SIDE_TASKS = ("titles", "compression", "approvals", "reflection")


def parse_ref(ref: str, default_kind: ProviderKind) -> tuple[ProviderKind, str]:
    """`kind:model`, `kind`, or a bare model name for the default kind."""
    ref = ref.strip()
    if not ref:
        raise ConfigError("an empty provider ref; use e.g. 'openai:gpt-4o-mini' or 'local'")
    kind, sep, model = ref.partition(":")
    if sep and kind in KINDS:
        return kind, model
    if not sep and ref in KINDS:
        return ref, ""
    # Anything else is a model name for the default provider (Ollama names have colons).
    return default_kind, ref


class ModelFactory:
    """Builds (and caches) providers for refs, chains and personalities.

    `on_retry` hears of every retry the providers it builds make (a surface shows it).
    """

    def __init__(self, settings: Settings, *, on_retry: OnRetry | None = None) -> None:
        self.settings = settings
        self.on_retry = on_retry
        self._built: dict[tuple[str, str], ModelProvider] = {}
        self._clients: dict[str, httpx.AsyncClient] = {}  # one per endpoint

    @property
    def default_kind(self) -> ProviderKind:
        return self.settings.provider

    def default_model_name(self, kind: ProviderKind) -> str:
        settings = self.settings
        if kind == "openai":
            return settings.model_override or settings.config.model.model or DEFAULT_OPENAI_MODEL
        if kind == "anthropic":
            if settings.provider == "anthropic" and settings.model_override:
                return settings.model_override
            return settings.config.anthropic.model
        return ""

    def provider(self, kind: ProviderKind, model: str = "") -> ModelProvider:
        model = model or self.default_model_name(kind)
        key = (kind, model)
        if key not in self._built:
            builders: dict[str, Callable[[str], ModelProvider]] = {
                "openai": self._openai,
                "anthropic": self._anthropic,
                "local": self._local,
            }
            self._built[key] = builders[kind](model)
        return self._built[key]

    def ref(self, ref: str) -> ModelProvider:
        return self.provider(*parse_ref(ref, self.default_kind))

    def chain(self, primary: ModelProvider, fallback: list[str] | tuple[str, ...]) -> ModelProvider:
        if not fallback:
            return primary
        from seam.services.llm.fallback import FallbackProvider

        return FallbackProvider([primary, *(self.ref(r) for r in fallback)])

    def main(self) -> ModelProvider:
        return self.chain(self.provider(self.default_kind), self.settings.config.model.fallback)

    def for_personality(self, personality: Personality) -> ModelProvider | None:
        """A personality's own model or chain; None when it uses the main one."""
        if not personality.model and not personality.fallback:
            return None
        primary = (
            self.ref(personality.model) if personality.model else self.provider(self.default_kind)
        )
        return self.chain(primary, personality.fallback)

    def side(self, task: str) -> ModelProvider:
        """The model for a side task (titles, compression, approvals, reflection)."""
        if task not in SIDE_TASKS:
            raise ValueError(f"unknown side task {task!r} (known: {', '.join(SIDE_TASKS)})")
        section = self.settings.config.side_models
        ref = getattr(section, task) or section.default
        return self.ref(ref) if ref else self.main()

    async def aclose(self) -> None:
        for provider in self._built.values():
            await provider.aclose()
        self._built.clear()
        for client in self._clients.values():
            await client.aclose()
        self._clients.clear()

    def _client(self, base_url: str) -> httpx.AsyncClient:
        """The one HTTP client (and connection pool) for an endpoint, made on first use;
        the providers only borrow it, the factory closes it."""
        if base_url not in self._clients:
            from seam.services.llm.http import default_client

            self._clients[base_url] = default_client(base_url)
        return self._clients[base_url]

    # -- builders --

    def _keys(self, single_env: str, pool_env: str) -> list[str]:
        env = self.settings.env
        pool = [k.strip() for k in env.get(pool_env, "").split(",") if k.strip()]
        if pool:
            return pool
        key = env.get(single_env, "").strip()
        return [key] if key else []

    def _pooled(
        self, kind: str, keys: list[str], make: Callable[[str, int], ModelProvider]
    ) -> ModelProvider:
        if len(keys) <= 1:
            return make(keys[0] if keys else "", -1)
        from seam.services.llm.pool import PooledProvider

        pool = self.settings.config.pool
        return PooledProvider(
            keys,
            lambda key: make(key, 0),
            strategy=pool.strategy,
            state_path=str(self.settings.home / "pools" / f"{kind}.json"),
            rate_limit_cooldown=pool.rate_limit_cooldown,
            auth_cooldown=pool.auth_cooldown,
            on_retry=self.on_retry,
        )

    def _link(self, section: ModelSection | AnthropicSection, retries: int) -> dict[str, Any]:
        """What a remote provider takes from its section: the window, the timeouts and the
        retries (in a pool the pool decides retries and rotation: `retries` 0 per key;
        -1 outside one)."""
        return {
            "max_context_tokens": section.max_context_tokens,
            "timeout": section.timeout,
            "connect_timeout": section.connect_timeout,
            "idle_timeout": section.idle_timeout,
            "max_retries": section.max_retries if retries < 0 else retries,
            "on_retry": self.on_retry,
        }

    def _openai(self, model: str) -> ModelProvider:
        from seam.services.llm.openai_compat import OpenAICompatProvider

        settings = self.settings
        section = settings.config.model
        base_url = settings.base_url or section.base_url or DEFAULT_OPENAI_BASE_URL
        keys = self._keys(section.api_key_env, section.api_keys_env)
        if base_url == DEFAULT_OPENAI_BASE_URL and not keys:
            raise ConfigError(
                f"the OpenAI API needs a key: set {section.api_key_env}, or point"
                " OPENAI_BASE_URL at a local OpenAI-compatible server"
            )

        def make(key: str, retries: int) -> ModelProvider:
            return OpenAICompatProvider(
                base_url=base_url,
                api_key=key or None,
                model=model,
                client=self._client(base_url.rstrip("/")),
                **self._link(section, retries),
            )

        return self._pooled("openai", keys, make)

    def _anthropic(self, model: str) -> ModelProvider:
        from seam.services.llm.anthropic import AnthropicProvider

        section = self.settings.config.anthropic
        keys = self._keys(section.api_key_env, section.api_keys_env)
        if not keys:
            raise ConfigError(f"Anthropic needs a key: set {section.api_key_env}")

        def make(key: str, retries: int) -> ModelProvider:
            return AnthropicProvider(
                api_key=key,
                model=model,
                base_url=section.base_url,
                max_tokens=section.max_tokens,
                thinking_budget=section.thinking_budget or None,
                client=self._client(section.base_url.rstrip("/")),
                **self._link(section, retries),
            )

        return self._pooled("anthropic", keys, make)

    def _local(self, model: str) -> ModelProvider:
        from seam.services.llm.llama_local import (
            LlamaCppProvider,
            find_bundled_model,
            llama_cpp_available,
        )

        section = self.settings.config.local
        if not llama_cpp_available():
            raise ConfigError(
                f"llama-cpp-python is missing for the local model: {LOCAL_SETUP_HINT}"
            )
        path = model or section.model_path or find_bundled_model()
        if not path:
            raise ConfigError(f"no local model is installed: {LOCAL_SETUP_HINT}")
        if not Path(path).expanduser().is_file():
            raise ConfigError(f"local model file {path!r} does not exist")
        return LlamaCppProvider(
            model_path=str(Path(path).expanduser()),
            n_ctx=section.n_ctx,
            n_threads=section.threads or None,
            max_tokens=section.max_tokens,
        )


def build_model(settings: Settings) -> ModelProvider:
    """The main provider (with its fallback chain) the settings describe."""
    return ModelFactory(settings).main()


class LazyModel:
    """Builds the configured provider on first use.

    Commands that never talk to a model (`seam sessions ...`) then work even when the
    model cannot be built, and they skip its import and set-up cost.
    """

    name: ReadThrough[str] = ReadThrough("built")
    model: ReadThrough[str] = ReadThrough("built")
    max_context_tokens: ReadThrough[int] = ReadThrough("built")
    capabilities: ReadThrough[ModelCapabilities] = ReadThrough("built")

    def __init__(
        self,
        factory: ModelFactory,
        build: Callable[[ModelFactory], ModelProvider] | None = None,
    ) -> None:
        self._factory = factory
        # What to build: the main model unless told (a side model, say).
        self._build = build or ModelFactory.main
        self._model: ModelProvider | None = None

    @property
    def built(self) -> ModelProvider:
        if self._model is None:
            self._model = self._build(self._factory)
        return self._model

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        return self.built.stream(request)

    def count_tokens(self, text: str) -> int:
        return self.built.count_tokens(text)

    async def aclose(self) -> None:
        self._model = None
        await self._factory.aclose()


class PersonalityModels:
    """The loop's model resolver: a personality's own model or chain, else the main one."""

    def __init__(self, factory: ModelFactory, main: ModelProvider) -> None:
        self._factory = factory
        self._main = main
        self._cache: dict[tuple[str | None, tuple[str, ...]], ModelProvider | None] = {}

    def __call__(self, personality: Personality) -> ModelProvider:
        key = (personality.model, personality.fallback)
        if key not in self._cache:
            self._cache[key] = self._factory.for_personality(personality)
        return self._cache[key] or self._main

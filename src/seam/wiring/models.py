"""Picks and builds the model provider the settings ask for."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from seam.contracts.model import ModelCapabilities, ModelChunk, ModelProvider, ModelRequest
from seam.wiring.settings import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_MODEL,
    ConfigError,
    Settings,
)

LOCAL_SETUP_HINT = (
    "run scripts/bootstrap to install the offline model, or configure a provider: "
    "set OPENAI_API_KEY (and OPENAI_BASE_URL for any OpenAI-compatible server)"
)


def build_model(settings: Settings) -> ModelProvider:
    if settings.provider == "openai":
        return build_openai(settings)
    return build_local(settings)


def build_openai(settings: Settings) -> ModelProvider:
    from seam.services.llm.openai_compat import OpenAICompatProvider

    section = settings.config.model
    base_url = settings.base_url or section.base_url or DEFAULT_OPENAI_BASE_URL
    model = settings.model_override or section.model or DEFAULT_OPENAI_MODEL
    if base_url == DEFAULT_OPENAI_BASE_URL and not settings.api_key:
        raise ConfigError(
            f"the OpenAI API needs a key: set {section.api_key_env}, or point OPENAI_BASE_URL at"
            " a local OpenAI-compatible server"
        )
    return OpenAICompatProvider(
        base_url=base_url,
        api_key=settings.api_key,
        model=model,
        max_context_tokens=section.max_context_tokens,
        timeout=section.timeout,
        max_retries=section.max_retries,
    )


def build_local(settings: Settings) -> ModelProvider:
    from seam.services.llm.llama_local import (
        LlamaCppProvider,
        find_bundled_model,
        llama_cpp_available,
    )

    section = settings.config.local
    if not llama_cpp_available():
        raise ConfigError(
            f"no provider is configured and llama-cpp-python is missing: {LOCAL_SETUP_HINT}"
        )
    path = section.model_path or find_bundled_model()
    if not path:
        raise ConfigError(
            f"no provider is configured and no local model is installed: {LOCAL_SETUP_HINT}"
        )
    if not Path(path).expanduser().is_file():
        raise ConfigError(f"[local] model_path {path!r} does not exist")
    return LlamaCppProvider(
        model_path=str(Path(path).expanduser()),
        n_ctx=section.n_ctx,
        n_threads=section.threads or None,
        max_tokens=section.max_tokens,
    )


class LazyModel:
    """Builds the configured provider on first use.

    Commands that never talk to a model (`seam sessions ...`) then work even when the
    model cannot be built, and they skip its import and set-up cost.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._model: ModelProvider | None = None

    @property
    def built(self) -> ModelProvider:
        if self._model is None:
            self._model = build_model(self._settings)
        return self._model

    @property
    def name(self) -> str:
        return self.built.name

    @property
    def model(self) -> str:
        return self.built.model

    @property
    def max_context_tokens(self) -> int:
        return self.built.max_context_tokens

    @property
    def capabilities(self) -> ModelCapabilities:
        return self.built.capabilities

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        return self.built.stream(request)

    def count_tokens(self, text: str) -> int:
        return self.built.count_tokens(text)

    async def aclose(self) -> None:
        if self._model is not None:
            await self._model.aclose()

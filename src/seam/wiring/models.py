"""Picks and builds the model provider the settings ask for."""

from __future__ import annotations

from pathlib import Path

from seam.contracts.model import ModelProvider
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

"""The doctor's model lines: which provider and why, whether a remote one answers, and
whether the local one can load (and, asked, generate a token)."""

from __future__ import annotations

import time
from pathlib import Path

from seam.apps.doctor.check import Check
from seam.apps.doctor.providers import check_provider, one_token
from seam.contracts.model import ModelError
from seam.wiring.models import LOCAL_SETUP_HINT, ModelFactory
from seam.wiring.settings import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_MODEL,
    ConfigError,
    Settings,
)


def _why(settings: Settings) -> str:
    """What made the settings pick their provider."""
    section = settings.config.model
    if section.provider != "auto":
        return f"provider = {section.provider!r} in {settings.config_path}"
    if settings.base_url:
        return "OPENAI_BASE_URL is set"
    if settings.api_key:
        return f"{section.api_key_env} is set"
    if section.base_url:
        return f"[model] base_url in {settings.config_path}"
    if settings.provider == "anthropic":
        return f"{settings.config.anthropic.api_key_env} is set"
    return "no provider configured: using the local model"


def provider_check(settings: Settings) -> Check:
    why = _why(settings)
    if settings.provider == "local":
        return Check("provider", True, f"local ({why})")
    if settings.provider == "anthropic":
        model = ModelFactory(settings).default_model_name("anthropic")
        return Check("provider", True, f"anthropic, model {model} ({why})")
    section = settings.config.model
    base_url = settings.base_url or section.base_url or DEFAULT_OPENAI_BASE_URL
    model = settings.model_override or section.model or DEFAULT_OPENAI_MODEL
    return Check("provider", True, f"openai-compatible at {base_url}, model {model} ({why})")


async def remote_live(settings: Settings, seconds: float) -> Check:
    """Does the configured remote provider answer? (The same check as `seam models`.)"""
    try:
        provider = ModelFactory(settings).provider(settings.provider)
    except ConfigError as exc:
        return Check("model endpoint", False, str(exc))
    try:
        ok, detail = await check_provider(provider, seconds)
    finally:
        await provider.aclose()
    if ok:
        return Check("model endpoint", True, f"{provider.name}:{provider.model} {detail}")
    key_env = (
        settings.config.anthropic.api_key_env
        if settings.provider == "anthropic"
        else settings.config.model.api_key_env
    )
    hint = f"check {key_env}" if "auth" in detail else "is the server running and reachable?"
    return Check("model endpoint", False, detail, hint)


def local_checks(settings: Settings) -> list[Check]:
    from seam.wiring.probes import bundled_model, llama_cpp_importable

    try:
        importable = llama_cpp_importable()
    except ImportError as exc:
        return [Check("local model", False, f"the local provider cannot load: {exc}")]
    if not importable:
        return [Check("llama-cpp-python", False, "not importable", LOCAL_SETUP_HINT)]
    checks = [Check("llama-cpp-python", True, "importable")]
    path = settings.config.local.model_path or bundled_model()
    if not path:
        checks.append(Check("local model", False, "no GGUF model found", LOCAL_SETUP_HINT))
        return checks
    if not Path(path).expanduser().is_file():
        hint = f"fix [local] model_path in {settings.config_path}"
        checks.append(Check("local model", False, f"{path} does not exist", hint))
        return checks
    checks.append(Check("local model", True, f"{path}"))
    return checks


async def generate_one_token(settings: Settings) -> Check:
    started = time.perf_counter()
    try:
        provider = ModelFactory(settings).provider("local")
        try:
            await one_token(provider)
        finally:
            await provider.aclose()
    except (ConfigError, ModelError) as exc:
        return Check("local generation", False, str(exc))
    return Check("local generation", True, f"1 token in {time.perf_counter() - started:.1f} s")

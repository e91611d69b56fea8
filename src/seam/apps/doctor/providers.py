"""What `seam models` shows: every configured provider, and whether it answers.

A provider is checked with `list_models()` when it has one (cheap, no tokens spent),
else with a one-token request. Pools list their keys by fingerprint with cooldowns.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from seam.contracts.messages import Message
from seam.contracts.model import ModelError, ModelProvider, ModelRequest
from seam.wiring.models import SIDE_TASKS, ModelFactory
from seam.wiring.settings import ConfigError, Settings


@dataclass(frozen=True, slots=True)
class ModelEntry:
    role: str  # "main", "fallback 1", "side: compression", "personality: coder"
    ref: str
    ok: bool
    detail: str
    keys: list[str] = field(default_factory=list)


async def one_token(provider: ModelProvider) -> None:
    """Have `provider` generate one token (and drop it)."""
    request = ModelRequest(system="", messages=(Message("user", "Hi"),), max_tokens=1)
    async for _ in provider.stream(request):
        pass


async def check_provider(provider: ModelProvider, seconds: float) -> tuple[bool, str]:
    try:
        list_models = getattr(provider, "list_models", None)
        if list_models is not None:
            models = await asyncio.wait_for(list_models(), seconds)
            note = "" if provider.model in models else f"; {provider.model!r} is not listed"
            return True, f"answers ({len(models)} models{note})"
        started = time.perf_counter()
        await asyncio.wait_for(one_token(provider), seconds)
        return True, f"answers (1 token in {time.perf_counter() - started:.1f} s)"
    except TimeoutError:
        return False, f"no answer within {seconds:g} s"
    except ModelError as exc:
        return False, str(exc)


def _keys(provider: ModelProvider) -> list[str]:
    state = getattr(provider, "state", None)
    if state is None:
        return []
    now = time.time()
    lines = []
    for key in state():
        line = f"{key.fingerprint}: {key.uses} uses, {key.failures} failures"
        if key.cooldown_until > now:
            line += f", cooling down {key.cooldown_until - now:.0f} s ({key.last_error})"
        lines.append(line)
    return lines


def _roles(settings: Settings) -> list[tuple[str, str]]:
    """(role, ref) of the main model, each fallback and each side model set."""
    roles: list[tuple[str, str]] = [("main", settings.provider)]
    roles += [(f"fallback {i}", ref) for i, ref in enumerate(settings.config.model.fallback, 1)]
    side = settings.config.side_models
    for task in SIDE_TASKS:
        ref = getattr(side, task) or side.default
        if ref:
            roles.append((f"side: {task}", ref))
    return roles


async def check_models(settings: Settings, *, seconds: float = 10.0) -> list[ModelEntry]:
    """An entry per configured model, each provider checked once (a model named again
    is "same as above")."""
    factory = ModelFactory(settings)
    entries: list[ModelEntry] = []
    seen: set[int] = set()
    try:
        for role, ref in _roles(settings):
            try:
                provider = (
                    factory.ref(ref) if role != "main" else factory.provider(settings.provider)
                )
            except ConfigError as exc:
                entries.append(ModelEntry(role, ref, False, str(exc)))
                continue
            label = f"{provider.name}:{provider.model}"
            if id(provider) in seen:
                entries.append(ModelEntry(role, label, True, "same as above"))
                continue
            seen.add(id(provider))
            ok, detail = await check_provider(provider, seconds)
            entries.append(ModelEntry(role, label, ok, detail, _keys(provider)))
    finally:
        await factory.aclose()
    return entries

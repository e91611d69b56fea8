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


async def check_provider(provider: ModelProvider, seconds: float) -> tuple[bool, str]:
    try:
        list_models = getattr(provider, "list_models", None)
        if list_models is not None:
            models = await asyncio.wait_for(list_models(), seconds)
            note = "" if provider.model in models else f"; {provider.model!r} is not listed"
            return True, f"answers ({len(models)} models{note})"
        started = time.perf_counter()
        request = ModelRequest(system="", messages=(Message("user", "Hi"),), max_tokens=1)

        async def one_token() -> None:
            async for _ in provider.stream(request):
                pass

        await asyncio.wait_for(one_token(), seconds)
        return True, f"answers (1 token in {time.perf_counter() - started:.1f} s)"
    except TimeoutError:
        return False, f"no answer within {seconds:g} s"
    except ModelError as exc:
        return False, str(exc)


def _entries(provider: ModelProvider) -> list[ModelProvider]:
    """A chain's entries, else the provider itself."""
    chain = getattr(provider, "chain", None)
    return list(chain) if chain else [provider]


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


async def check_models(settings: Settings, *, seconds: float = 10.0) -> list[ModelEntry]:
    factory = ModelFactory(settings)
    entries: list[ModelEntry] = []
    roles: list[tuple[str, str]] = [("main", settings.provider)]
    roles += [(f"fallback {i}", ref) for i, ref in enumerate(settings.config.model.fallback, 1)]
    side = settings.config.side_models
    roles += [(f"side: {task}", getattr(side, task) or side.default) for task in SIDE_TASKS]
    seen: set[int] = set()
    try:
        for role, ref in roles:
            if role.startswith("side") and not ref:
                continue
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

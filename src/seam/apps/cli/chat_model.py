"""`/model` in `seam chat`: the model this chat talks to, the ones configured, a switch.

`/model NAME` switches as `seam chat --model NAME` would have started: NAME is a model of
the main provider, for the rest of this chat (the chat reopens its runtime with it; the
session and its history stay). `/model` alone shows the current model and the configured
ones (the config's, its fallbacks, the personalities' own), which are also what Tab offers
after `/model `.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seam.apps.cli.runner import CliError

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime


def current_model(runtime: Runtime) -> str:
    model = runtime.model
    return f"{model.name}:{model.model}" if model.model else model.name


def model_names(runtime: Runtime) -> list[str]:
    """Model names `/model` can switch to: the current one, the config's, and those the
    personalities pin for the main provider (in that order, each once)."""
    from seam.wiring.models import parse_ref

    names = [runtime.model.model]
    settings = runtime.settings
    if settings is not None:
        kind = settings.provider
        names.append(settings.config.model.model if kind == "openai" else "")
        for personality in runtime.personalities.list():
            if personality.model:
                found_kind, name = parse_ref(personality.model, kind)
                names.append(name if found_kind == kind else "")
    return [name for name in dict.fromkeys(names) if name]


def model_lines(runtime: Runtime) -> list[str]:
    """What `/model` alone says."""
    lines = [f"current model: {current_model(runtime)}"]
    names = model_names(runtime)
    if names:
        lines.append("configured: " + ", ".join(names))
    settings = runtime.settings
    fallback = settings.config.model.fallback if settings is not None else []
    if fallback:
        lines.append("fallbacks: " + ", ".join(fallback))
    pinned = [f"{p.id} → {p.model}" for p in runtime.personalities.list() if p.model]
    if pinned:
        lines.append("personalities: " + ", ".join(pinned))
    lines.append("switch with /model NAME (a model of the main provider, for this chat)")
    return lines


def checked_name(arg: str) -> str:
    """The model name `/model NAME` was given; a usage error for an unusable one."""
    name = arg.strip()
    if not name or any(char.isspace() for char in name) or not name.isprintable():
        raise CliError("usage: /model NAME (one word, e.g. gpt-4o-mini; /model lists them)")
    return name


__all__ = ["checked_name", "current_model", "model_lines", "model_names"]

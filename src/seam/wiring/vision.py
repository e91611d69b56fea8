"""Whether the model behind a personality sees images: what a surface asks before it
sends a person's image on (or refuses it with `blind_message`), and what the
OpenAI-compatible endpoint asks before it passes a request's image parts on.

Anthropic's models all take images; an OpenAI-compatible model is told by its name
(`services/llm/tool_images.sees_images`); the local GGUF model takes text only. A
personality with a fallback chain is judged by its first model, the one that answers
unless it fails.
"""

from __future__ import annotations

from collections.abc import Callable

from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sessions import SessionInfo
from seam.services.llm.tool_images import sees_images
from seam.wiring.models import ModelFactory, parse_ref
from seam.wiring.runtime import Runtime
from seam.wiring.settings import Settings


def vision_models(
    settings: Settings, personalities: PersonalityRegistry
) -> Callable[[str], tuple[str, bool]]:
    """`model_of(personality_id)`: that personality's model, as a person names it
    (`openai:gpt-4o-mini`, `the local model`), and whether it sees images."""
    factory = ModelFactory(settings)  # for its defaults only: it builds no provider here

    def model_of(personality_id: str) -> tuple[str, bool]:
        ref = personalities.get(personality_id).model
        if ref:
            kind, name = parse_ref(ref, factory.default_kind)
        else:
            kind, name = factory.default_kind, ""
        name = name or factory.default_model_name(kind)
        if kind == "anthropic":
            return f"anthropic:{name}", True
        if kind == "openai":
            return f"openai:{name}", sees_images(name)
        return "the local model", False

    return model_of


def turn_model(
    runtime: Runtime, personality: str | None, stored: SessionInfo | None
) -> tuple[str, bool] | None:
    """The model a turn runs on (the given personality's, else the session's, else the
    default one's) and whether it sees images; None for a runtime without settings (one
    assembled by hand, as tests do), whose models are not named."""
    if runtime.settings is None:
        return None
    chosen = personality or (stored.personality if stored is not None else None)
    pid = chosen or runtime.personalities.default_id
    return vision_models(runtime.settings, runtime.personalities)(pid)


def vision_check(settings: Settings, personalities: PersonalityRegistry) -> Callable[[str], bool]:
    """`check(personality_id)`: whether that personality's model sees images."""
    model_of = vision_models(settings, personalities)
    return lambda personality_id: model_of(personality_id)[1]


__all__ = ["turn_model", "vision_check", "vision_models"]

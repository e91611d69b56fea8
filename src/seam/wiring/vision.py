"""Whether the model behind a personality sees images: what the OpenAI-compatible
endpoint asks before it passes a request's image parts on (or refuses them with a 400).

Anthropic's models all take images; an OpenAI-compatible model is told by its name
(`services/llm/tool_images.sees_images`); the local GGUF model takes text only. A
personality with a fallback chain is judged by its first model, the one that answers
unless it fails.
"""

from __future__ import annotations

from collections.abc import Callable

from seam.contracts.personality import PersonalityRegistry
from seam.services.llm.tool_images import sees_images
from seam.wiring.models import ModelFactory, parse_ref
from seam.wiring.settings import Settings


def vision_check(settings: Settings, personalities: PersonalityRegistry) -> Callable[[str], bool]:
    """`check(personality_id)`: whether that personality's model sees images."""
    factory = ModelFactory(settings)  # for its defaults only: it builds no provider here

    def check(personality_id: str) -> bool:
        ref = personalities.get(personality_id).model
        if ref:
            kind, name = parse_ref(ref, factory.default_kind)
        else:
            kind, name = factory.default_kind, ""
        name = name or factory.default_model_name(kind)
        if kind == "anthropic":
            return True
        return kind == "openai" and sees_images(name)

    return check


__all__ = ["vision_check"]

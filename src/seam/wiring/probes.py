"""What `seam doctor` looks at, built exactly as the runtime builds it.

The checks and their verdicts live in `apps/doctor/`; this module only reads the settings
and builds the pieces those checks examine (the personality files, the default
personality's fixed prompt, the local model's parts), so a check never reaches past
wiring into the backends.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from seam.contracts.context import PromptInputs
from seam.contracts.tools import ToolContext
from seam.core.context_step import room_problem
from seam.core.storage import InMemoryStorage
from seam.core.tokens import CharTokenEstimator
from seam.plugins.personalities.files import FilePersonalityRegistry, write_default_personality
from seam.wiring.context import build_context_builder
from seam.wiring.settings import Settings
from seam.wiring.tools import build_tool_registry

__all__ = [
    "bundled_model",
    "fixed_prompt_tokens",
    "llama_cpp_importable",
    "model_window",
    "personality_files",
    "room_problem",
]


def model_window(settings: Settings) -> int:
    """The context window turns get: `[context] window`, else the provider's setting."""
    config = settings.config
    if config.context.window:
        return config.context.window
    provider = settings.provider
    if provider == "local":
        return config.local.n_ctx
    if provider == "anthropic":
        return config.anthropic.max_context_tokens
    return config.model.max_context_tokens


def personality_files(settings: Settings, root: Path | None = None) -> FilePersonalityRegistry:
    """The personality files under `root` (default: the settings' folder), as the
    runtime reads them."""
    folder = settings.personalities_dir if root is None else root
    return FilePersonalityRegistry(str(folder), default_id=settings.config.agent.personality)


async def fixed_prompt_tokens(settings: Settings) -> int | None:
    """The estimated tokens of the default personality's fixed prompt: its system prompt
    without memory or project files, plus its tools' schemas. None when the personality
    cannot be read (the doctor's personalities check says why)."""
    default_id = settings.config.agent.personality
    try:
        with tempfile.TemporaryDirectory() as scratch:
            root = settings.personalities_dir
            if not root.is_dir():  # what the first run will write
                write_default_personality(scratch)
                root = Path(scratch)
            personality = personality_files(settings, root).get(default_id)
    except Exception:
        return None
    storage = InMemoryStorage()
    registry = build_tool_registry()
    tools = registry.build(personality.toolset, ToolContext("doctor", storage))
    inputs = PromptInputs(personality.soul, [tool.name for tool in tools], None, storage)
    prompt = await build_context_builder(settings).build("doctor", inputs)
    estimator = CharTokenEstimator()
    return estimator.text(prompt.system) + estimator.tools(registry.definitions(tools))


def llama_cpp_importable() -> bool:
    """Whether llama-cpp-python can be imported; ImportError when the local provider's
    own module cannot load."""
    from seam.services.llm.llama_local import llama_cpp_available

    return llama_cpp_available()


def bundled_model() -> str | None:
    """The GGUF file of the bundled model package, None when it is not installed."""
    from seam.services.llm.llama_local import find_bundled_model

    return find_bundled_model()

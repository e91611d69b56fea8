"""Pure logic over the contracts: the loop, the registries and the empty stack."""

from seam.core.hook_registry import DefaultHookRegistry
from seam.core.loop import AgentLoop, LoopOptions
from seam.core.memory import NoopMemory
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, Step, call, error_step, text_step, tool_step
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage, ScopedStorage
from seam.core.tool_registry import DefaultToolRegistry

__all__ = [
    "AgentLoop",
    "DefaultHookRegistry",
    "DefaultToolRegistry",
    "InMemorySessionStore",
    "InMemoryStorage",
    "LoopOptions",
    "NoopMemory",
    "ScopedStorage",
    "ScriptedModel",
    "StaticPersonalityRegistry",
    "Step",
    "call",
    "error_step",
    "text_step",
    "tool_step",
]

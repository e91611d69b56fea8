"""Pure logic over the contracts: the loop, the registries and the empty stack."""

from seam.core.coordinator import Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.loop import AgentLoop, LoopOptions
from seam.core.memory import NoopMemory
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, Step, call, error_step, text_step, tool_step
from seam.core.session_factory import Session, SessionFactory
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage, ScopedStorage
from seam.core.tool_registry import DefaultToolRegistry
from seam.core.workflows import Workflow, WorkflowNode, WorkflowRegistry

__all__ = [
    "AgentLoop",
    "Coordinator",
    "DefaultHookRegistry",
    "DefaultToolRegistry",
    "InMemoryExecutionStore",
    "InMemorySessionStore",
    "InMemoryStorage",
    "LoopOptions",
    "NoopMemory",
    "ScopedStorage",
    "ScriptedModel",
    "Session",
    "SessionFactory",
    "StaticPersonalityRegistry",
    "Step",
    "Workflow",
    "WorkflowNode",
    "WorkflowRegistry",
    "call",
    "error_step",
    "text_step",
    "tool_step",
]

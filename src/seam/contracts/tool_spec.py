"""`ToolSpec`: what the model is told about a built-in tool, declared once.

Every built-in tool answers the `Tool` protocol's five questions (name, description,
argument schema, may it run alongside others, may it run again after a crash) the same
way: constants of its class. `SpecTool` reads them from one `ToolSpec`, so a tool class
declares its arguments and flags and nothing else; the schema's frame (`object_schema`)
and the safe defaults (not concurrent, not idempotent) live here, not in every tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from seam.contracts.tools import object_schema


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool's declaration. `arguments` are the JSON Schema properties, `required`
    the ones that must be given. `concurrent` and `idempotent` default to the safe
    answer (False): a tool says True only when it is so by construction."""

    name: str
    description: str
    arguments: Mapping[str, Any]
    required: tuple[str, ...] = ()
    concurrent: bool = False
    idempotent: bool = False

    @property
    def parameters(self) -> Mapping[str, Any]:
        """The arguments' JSON Schema, framed as every built-in tool's is."""
        return object_schema(self.arguments, *self.required)


def positive_integer(description: str) -> Mapping[str, Any]:
    """The schema of a count or position that starts at 1 (a line, an item, a limit)."""
    return {"type": "integer", "minimum": 1, "description": description}


class SpecTool:
    """Base of a tool declared by a `ToolSpec`: when a subclass is defined, its `spec`
    becomes the class attributes the `Tool` protocol reads (`ReadFile.parameters` works
    on the class, and the schema is built once, not per session)."""

    spec: ClassVar[ToolSpec]
    name: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[Mapping[str, Any]]
    concurrent: ClassVar[bool]
    idempotent: ClassVar[bool]

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        spec = cls.spec
        cls.name = spec.name
        cls.description = spec.description
        cls.parameters = spec.parameters
        cls.concurrent = spec.concurrent
        cls.idempotent = spec.idempotent

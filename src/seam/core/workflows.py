"""Registered multi-step workflows whose nodes are sessions.

A workflow is a fixed sequence of nodes. Each node is a prompt template run in its own
child session (built by the `SessionFactory`, like every session), so each step is a
durable submission: a resumed workflow finds the steps already answered and goes on from
the first unfinished one. `{input}` in a template is the workflow's input, `{previous}`
the previous node's answer. This module holds the definitions; the factory's
`WorkflowExecutor` runs them (so this one imports nothing of the factory).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass

_FIELDS = frozenset({"input", "previous"})


@dataclass(frozen=True, slots=True)
class WorkflowNode:
    name: str
    prompt: str
    personality: str | None = None
    tools: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Workflow:
    name: str
    description: str
    nodes: tuple[WorkflowNode, ...]


class WorkflowRegistry:
    def __init__(self, workflows: Sequence[Workflow] = ()) -> None:
        self._workflows: dict[str, Workflow] = {}
        for workflow in workflows:
            self.register(workflow)

    def register(self, workflow: Workflow) -> None:
        if not workflow.nodes:
            raise ValueError(f"workflow {workflow.name!r} has no nodes")
        names = [n.name for n in workflow.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"workflow {workflow.name!r} has duplicate node names: {names}")
        for node in workflow.nodes:
            fields = {f for _, f, _, _ in string.Formatter().parse(node.prompt) if f}
            unknown = fields - _FIELDS
            if unknown:
                raise ValueError(
                    f"workflow {workflow.name!r}, node {node.name!r}: unknown placeholders "
                    f"{sorted(unknown)} (use {{input}} and {{previous}})"
                )
        self._workflows[workflow.name] = workflow

    def get(self, name: str) -> Workflow:
        try:
            return self._workflows[name]
        except KeyError:
            known = ", ".join(sorted(self._workflows)) or "none"
            raise KeyError(f"no workflow {name!r} (registered: {known})") from None

    def names(self) -> list[str]:
        return sorted(self._workflows)

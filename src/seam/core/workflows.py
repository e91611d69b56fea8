"""Registered multi-step workflows whose nodes are sessions.

A workflow is a fixed sequence of nodes. Each node is a prompt template run in its own
child session (built by the `SessionFactory`, like every session), so each step is a
durable submission: a resumed workflow finds the steps already answered and goes on from
the first unfinished one. `{input}` in a template is the workflow's input, `{previous}`
the previous node's answer.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from seam.contracts.tools import ToolError

if TYPE_CHECKING:
    from seam.core.session_factory import SessionFactory

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


class WorkflowExecutor:
    """Runs workflows on behalf of the session stored under `storage_key`."""

    def __init__(self, factory: SessionFactory, storage_key: str, depth: int = 0) -> None:
        self.factory = factory
        self.storage_key = storage_key
        self.depth = depth

    async def run(self, name: str, input: str, *, run_id: str) -> str:
        from seam.core.session_factory import answer_of, submission_id_for

        try:
            workflow = self.factory.workflows.get(name)
        except KeyError as exc:
            raise ToolError(str(exc.args[0])) from None
        parent = await self.factory.resolve(self.storage_key)
        if self.depth > parent.depth:  # the caller knows the session is deeper than its lineage
            parent.depth = self.depth
        previous = ""
        for node in workflow.nodes:
            child = await self.factory.create_child(
                parent,
                f"wf-{name}-{run_id}-{node.name}",
                personality=node.personality,
                tools=node.tools,
            )
            prompt = node.prompt.format(input=input, previous=previous)
            sub = await child.ask(prompt, submission_id=submission_id_for(child.key))
            previous = answer_of(sub)
        return previous

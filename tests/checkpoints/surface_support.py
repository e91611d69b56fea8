"""A real runtime whose turns take checkpoints, for the surface tests (`test_surface_*`):
SQLite store, the real file tools on the real file system, the shadow-git engine under a
tmp `checkpoints/` directory, the turn hook and the undo service attached as
`attach_checkpoints` attaches them. Only the model is scripted."""

from __future__ import annotations

import json
import os
from pathlib import Path

from seam.contracts.checkpoints import CheckpointSettings
from seam.core import DefaultToolRegistry, ScriptedModel
from seam.core.scripted_model import Step, call, text_step, tool_step
from seam.plugins.checkpoints.turns import TurnCheckpoints
from seam.plugins.checkpoints.undo import UndoService
from seam.plugins.guardrail.approvals import ApprovalCache
from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.gate import GuardedCommandGate
from seam.plugins.tools.files import register_file_tools
from seam.plugins.tools.shell import Terminal
from seam.services.checkpoints import ShadowCheckpoints
from seam.services.sandbox.local import LocalSandboxProvider
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.storage.fs import FsStorage
from seam.wiring import assemble_runtime
from seam.wiring.runtime import Runtime
from tests.support.openai_server import OpenAIServer, tool_call_reply
from tests.support.openai_server import text_reply as server_text


def attach(runtime: Runtime, home: Path) -> ShadowCheckpoints:
    """The checkpoints of `runtime`'s turns, under `home/checkpoints`."""
    engine = ShadowCheckpoints(home / "checkpoints", CheckpointSettings(), base_env=os.environ)
    store = runtime.store
    hook = TurnCheckpoints(engine, store, store, runtime.loop.working_dir_for)  # type: ignore[arg-type]
    hook.register(runtime.hooks)
    runtime.checkpoints = UndoService(engine, store, store)  # type: ignore[arg-type]
    return engine


def project(tmp: Path) -> Path:
    """A project of two files the turns below change."""
    root = tmp / "project"
    root.mkdir(parents=True, exist_ok=True)
    (root / "keep.txt").write_text("kept as it was\n")
    (root / "notes.txt").write_text("first version\n")
    return root


def runtime_over(model: ScriptedModel, tmp: Path, root: Path) -> Runtime:
    tools = DefaultToolRegistry()
    register_file_tools(tools)
    runtime = assemble_runtime(
        model=model,
        store=SQLiteSessionStore(str(tmp / "sessions.db")),
        tools=tools,
        storage=FsStorage(),
        working_dir=str(root),
    )
    attach(runtime, tmp)
    return runtime


def write_turn(path: str, content: str, answer: str = "done") -> list[Step]:
    """One turn's model steps: write `path`, then answer."""
    return [tool_step(call("write_file", path=path, content=content)), text_step(answer)]


def equip(runtime: Runtime, tmp: Path) -> Path:
    """Give a runtime built elsewhere (the web and gateway harnesses) the real file tools
    on the real file system in a fresh project, and checkpoints; returns the project."""
    root = project(tmp)
    register_file_tools(runtime.loop.tools)
    runtime.loop.storage = FsStorage()
    runtime.loop.working_dir = str(root)
    attach(runtime, tmp)
    return root


def equip_terminal(runtime: Runtime, tmp: Path) -> None:
    """Give such a runtime the real `terminal` tool on the local (process) backend, behind
    the real command gate whose lasting answers go to `tmp/approvals.json`: a command
    that changes files asks the surface's person first, as in `seam serve`."""
    runtime.loop.tools.register_tool(Terminal())
    runtime.loop.sandboxes = LocalSandboxProvider(base_env=os.environ)
    runtime.loop.gate = GuardedCommandGate(
        CommandClassifier(), ApprovalCache(tmp / "approvals.json")
    )


def write_call(path: str, content: str) -> tuple[str, str]:
    """A `write_file` call as the loopback OpenAI server scripts it."""
    return ("write_file", json.dumps({"path": path, "content": content}))


def two_turns_script(server: OpenAIServer, project_dir: Path) -> None:
    """notes.txt as it was; then turn 1 creates a.txt and turn 2 rewrites notes.txt."""
    (project_dir / "notes.txt").write_text("first version\n")
    server.push(
        tool_call_reply([write_call("a.txt", "from turn 1\n")]),
        server_text("wrote a"),
        tool_call_reply([write_call("notes.txt", "turn 2 was here\n")]),
        server_text("rewrote notes"),
    )

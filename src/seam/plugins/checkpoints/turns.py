"""A checkpoint before the first change of every turn, and one when the turn ends.

`TurnCheckpoints` listens on `BEFORE_TOOL_CALL`: the first call of a turn that can change
files (the file write and patch tools; any `terminal` or `execute_code` call the guard
does not prove read-only) snapshots the session's working directory and records the
checkpoint in the session's durable log *before* the tool runs (intent first: a crash
while the tool runs leaves a row that says where the files were). Later calls of the same
turn cost a dictionary lookup. On `AGENT_DONE` a turn that took one snapshots again (its
`after`), so undo can tell a person's later edits from the agent's.

A turn that changes nothing takes no checkpoint and costs nothing: no git call, no store
read or write. A checkpoint that fails never blocks the tool: the person is told (a
notice) that this change cannot be undone.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from seam.contracts.checkpoints import CheckpointEngine, CheckpointError, CheckpointLog
from seam.contracts.guardrail import Guardrail
from seam.contracts.hooks import (
    AGENT_DONE,
    BEFORE_TOOL_CALL,
    AgentDone,
    BeforeToolCall,
    HookNotice,
    HookRegistry,
    ToolCallChange,
)
from seam.contracts.sessions import SessionNotFound, Transcript

logger = logging.getLogger(__name__)

# Tools that write files whatever their arguments, and those that start subagents (whose
# changes to the shared directory the parent's turn then takes back with its own).
WRITING_TOOLS = frozenset({"write_file", "patch", "delegate_task", "workflow"})
# Tools that run code: they change files unless the guard proves the command only reads.
# The value names the argument holding a shell command (None: not a shell command).
RUNNING_TOOLS: Mapping[str, str | None] = {"terminal": "command", "execute_code": None}
# Turns remembered at once (a turn that ends in an error never says it ended).
_REMEMBERED = 1024


@dataclass
class TurnCheckpoints:
    """The hook; `work_dir_for(session_key)` says where a session's tools run, and
    `guardrail` proves commands read-only (None: every command counts as a change)."""

    engine: CheckpointEngine
    log: CheckpointLog
    transcript: Transcript
    work_dir_for: Callable[[str], str]
    guardrail: Guardrail | None = None
    # (session key, turn id) -> the directory snapshotted, for the turns that took one.
    _taken: OrderedDict[tuple[str, str], str] = field(default_factory=OrderedDict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def register(self, hooks: HookRegistry) -> None:
        hooks.on_modifying(BEFORE_TOOL_CALL, self.before_tool_call)
        hooks.on_void(AGENT_DONE, self.agent_done)

    def changes_files(self, name: str, arguments: Mapping[str, Any], cwd: str) -> bool:
        """Whether a call of tool `name` with `arguments` may change files in `cwd`."""
        if name in WRITING_TOOLS:
            return True
        if name not in RUNNING_TOOLS:
            return False
        argument = RUNNING_TOOLS[name]
        command = arguments.get(argument) if argument is not None else None
        if not isinstance(command, str) or self.guardrail is None:
            return True
        return not self.guardrail.classify(command, cwd=cwd).read_only

    async def before_tool_call(self, call: BeforeToolCall) -> ToolCallChange | None:
        turn = (call.session_key, call.turn_id)
        if turn in self._taken or (
            call.name not in WRITING_TOOLS and call.name not in RUNNING_TOOLS
        ):
            return None
        work_dir = self.work_dir_for(call.session_key)
        if not self.changes_files(call.name, call.arguments, work_dir):
            return None
        lock = self._locks.setdefault(call.session_key, asyncio.Lock())
        async with lock:  # two calls of one step: one checkpoint
            if turn in self._taken:
                return None
            try:
                await self._record(call, work_dir)
            except (CheckpointError, SessionNotFound) as exc:
                logger.warning("no checkpoint for %s: %s", call.session_key, exc)
                text = f"no checkpoint before this change ({exc}); it cannot be undone"
                return ToolCallChange(notice=HookNotice("checkpoint", text))
        return None

    async def _record(self, call: BeforeToolCall, work_dir: str) -> None:
        rows = await self.log.checkpoints(call.session_key)
        # A turn resumed after a crash keeps the checkpoint it took before it.
        if not rows or rows[-1].turn_id != call.turn_id:
            info = await self.transcript.get(call.session_key)
            if info is None:
                raise SessionNotFound(f"no session {call.session_key!r}")
            before = await self.engine.snapshot(
                work_dir, session_key=call.session_key, label=f"before turn {call.turn_id}"
            )
            await self.log.record_checkpoint(
                call.session_key,
                turn_id=call.turn_id,
                work_dir=work_dir,
                before=before,
                message_count=info.message_count,
            )
        self._taken[(call.session_key, call.turn_id)] = work_dir
        while len(self._taken) > _REMEMBERED:
            self._taken.popitem(last=False)

    async def agent_done(self, done: AgentDone) -> None:
        work_dir = self._taken.pop((done.session_key, done.turn_id), None)
        if work_dir is None:
            return
        try:
            after = await self.engine.snapshot(
                work_dir, session_key=done.session_key, label=f"after turn {done.turn_id}"
            )
            await self.log.finish_checkpoint(done.session_key, done.turn_id, after)
            # The disk the checkpoints use stays within the budget (this session's last).
            await self.engine.prune_to_budget(keep=[done.session_key])
        except CheckpointError as exc:
            logger.warning("no checkpoint after turn %s: %s", done.turn_id, exc)

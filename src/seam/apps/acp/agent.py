"""The ACP agent: editor requests onto `Runtime` calls, turn events onto session updates.

Every prompt is a durable submission (`Runtime.run`), streamed back as agent message and
thought chunks, tool calls and plan updates; approvals become `session/request_permission`
and `session/cancel` stops the turn. Each session works in its own `cwd`, so turns of
different sessions run side by side; one session's prompts run one after another.
`session/list`, `session/close`, titles and the model option are in `threads.py`.

The editor is the owner unless `seam acp --tenant T` says otherwise; what a tenant may
not do is decided in `access.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass, field
from typing import Any

import acp
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
    ToolCallUpdate,
)

from seam import __version__
from seam.apps.acp.access import EditorAccess
from seam.apps.acp.commands import local_commands, mcp_prompts, prompt_turn
from seam.apps.acp.mapping import (
    decision_for,
    plan_from_todo,
    prompt_text,
    stop_reason,
    tool_kind,
    tool_title,
)
from seam.apps.acp.sessions import (
    set_working_dir,
    skill_prompt,
    stored_messages,
)
from seam.apps.acp.storage import CURRENT_SESSION, ClientStorage
from seam.apps.acp.threads import MODEL_OPTION, Titles, list_threads, model_option
from seam.apps.acp.undo import is_undo, undo_in_editor
from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    TextDelta,
    ThinkingDelta,
    ToolApprovalRequired,
    ToolEnd,
    ToolStart,
)
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.tools import CancelToken
from seam.wiring.acp import EditorServer, add_mcp_servers, model_choices, use_session_models
from seam.wiring.runtime import Runtime

log = logging.getLogger("seam.acp")


@dataclass
class _Session:
    name: str
    cwd: str
    cancel: CancelToken | None = None
    approvals: dict[str, str] = field(default_factory=dict)  # call id -> session key
    turns: asyncio.Lock = field(default_factory=asyncio.Lock)  # one prompt at a time


class _EditorFiles:
    """`ClientFiles` over the ACP connection."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    async def read(self, session_id: str, path: str) -> str:
        response = await self._conn.read_text_file(session_id=session_id, path=path)
        return str(response.content)

    async def write(self, session_id: str, path: str, text: str) -> None:
        await self._conn.write_text_file(session_id=session_id, path=path, content=text)


class SeamAgent:
    """An `acp.Agent` over one runtime."""

    def __init__(
        self, runtime: Runtime, storage: ClientStorage, access: EditorAccess | None = None
    ) -> None:
        self.runtime = runtime
        self.storage = storage
        self.access = access or EditorAccess()
        self.conn: Any = None
        self.sessions: dict[str, _Session] = {}
        self._background: set[asyncio.Task[None]] = set()
        self.titles = Titles(runtime, None)
        # The model each session was switched to (session key -> ref), read at each turn.
        self.models: dict[str, str] = {}
        self._choices: list[str] | None = None
        use_session_models(runtime, self.models)

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.titles.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        fs = client_capabilities.fs if client_capabilities is not None else None
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            self.storage.use_client(
                _EditorFiles(self.conn),
                read=bool(fs.read_text_file),
                write=bool(fs.write_text_file),
            )
        return InitializeResponse(
            protocol_version=min(protocol_version, acp.PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), close=SessionCloseCapabilities()
                ),
            ),
            agent_info=Implementation(name="seam", title="Seam", version=__version__),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        self._check_servers(mcp_servers)
        name = f"acp-{secrets.token_hex(6)}"
        # No title yet: the runtime names the thread after its first exchange.
        await self.runtime.get_session(self.runtime.session_key_for(name))
        await self._open(name, cwd, mcp_servers)
        return NewSessionResponse(session_id=name, config_options=self._config(name))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse | None:
        self._check_servers(mcp_servers)
        messages = await stored_messages(self.runtime, session_id)
        if messages is None:
            raise acp.RequestError.invalid_params({"sessionId": f"no session {session_id}"})
        await self._open(session_id, cwd, mcp_servers)
        for message in messages:
            for update in _replay(message):
                await self.conn.session_update(session_id=session_id, update=update)
        await self.titles.tell(session_id)
        return LoadSessionResponse(config_options=self._config(session_id))

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        try:
            return await list_threads(self.runtime, cwd, cursor)
        except ValueError as exc:
            raise acp.RequestError.invalid_params({"cursor": str(exc)}) from None

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop the thread's turn (if one runs) and forget the thread here; it stays
        stored, so `session/load` opens it again."""
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params({"sessionId": f"unknown session {session_id}"})
        await self.cancel(session_id)
        async with session.turns:  # the cancelled turn has settled
            self.sessions.pop(session_id, None)
        key = self.runtime.session_key_for(session_id)
        self.models.pop(key, None)
        self.titles.told.pop(session_id, None)
        self.runtime.drop_session(key)
        return CloseSessionResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """Switch the thread's model (the only option): its next turns run on it."""
        if session_id not in self.sessions:
            raise acp.RequestError.invalid_params({"sessionId": f"unknown session {session_id}"})
        if config_id != MODEL_OPTION:
            raise acp.RequestError.invalid_params({"configId": f"no option {config_id!r}"})
        choices = self._model_choices()
        if not isinstance(value, str) or value not in choices:
            known = ", ".join(choices) or "none"
            problem = f"no model {value!r} (models: {known})"
            raise acp.RequestError.invalid_params({"value": problem})
        self.models[self.runtime.session_key_for(session_id)] = value
        return SetSessionConfigOptionResponse(config_options=self._config(session_id))

    def _model_choices(self) -> list[str]:
        if self._choices is None:
            self._choices = model_choices(self.runtime)
        return self._choices

    def _config(self, name: str) -> list[Any]:
        current = self.models.get(self.runtime.session_key_for(name), "")
        return model_option(self._model_choices(), current)

    def _check_servers(self, mcp_servers: list[Any] | None) -> None:
        """Refuse a tenant's MCP servers before anything is opened."""
        problem = self.access.mcp_refusal(mcp_servers)
        if problem is not None:
            raise acp.RequestError.invalid_params({"mcpServers": problem})

    async def _open(self, name: str, cwd: str, mcp_servers: list[Any] | None) -> None:
        self.sessions[name] = _Session(name=name, cwd=cwd)
        await set_working_dir(self.runtime, name, cwd)
        servers = [_editor_server(s) for s in mcp_servers or ()]
        await add_mcp_servers(self.runtime, servers, cwd=cwd)
        # Sent after the response that names the session: the SDK writes it as this handler
        # returns, before the task's first step (a hop to a thread) is done.
        task = asyncio.ensure_future(self._advertise(name, cwd))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _advertise(self, session_id: str, cwd: str) -> None:
        """The session's commands (`commands.py`) as ACP's available commands: Seam's
        own at once, then again with the MCP prompts once the servers have listed them."""
        try:
            commands = await local_commands(self.runtime, cwd)
            if commands:
                await self._offer(session_id, commands)
            prompts = await mcp_prompts(self.runtime)
            if prompts:
                await self._offer(session_id, [*commands, *prompts])
        except Exception:
            log.warning("could not list the commands of %s", session_id, exc_info=True)

    async def _offer(self, session_id: str, commands: list[AvailableCommand]) -> None:
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=commands
        )
        await self.conn.session_update(session_id=session_id, update=update)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        problem = self.access.mode_refusal()
        if problem is not None:
            raise acp.RequestError.invalid_params({"modeId": problem})
        return None

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise acp.RequestError.invalid_params({"sessionId": f"unknown session {session_id}"})
        undo = is_undo(prompt_text(prompt))
        if undo is not None:
            async with session.turns:
                can_write = self.storage.can_write
                await undo_in_editor(self.runtime, self.conn, session_id, undo, can_write=can_write)
            return PromptResponse(stop_reason="end_turn")
        text, problem = await self._turn_text(session, prompt_text(prompt))
        if problem:
            update = acp.update_agent_message_text(problem)
            await self.conn.session_update(session_id=session_id, update=update)
            return PromptResponse(stop_reason="end_turn")
        async with session.turns:
            cancel = CancelToken()
            session.cancel = cancel
            reset = CURRENT_SESSION.set(session_id)
            try:
                done = await self._stream(session, text, cancel)
            finally:
                CURRENT_SESSION.reset(reset)
                session.cancel = None
        finish = done.finish_reason if done is not None else "cancelled"
        await self.titles.after_turn(session_id)
        return PromptResponse(stop_reason=stop_reason(finish, cancelled=cancel.cancelled))

    async def _turn_text(self, session: _Session, text: str) -> tuple[str, str]:
        """The prompt as the turn runs it (an MCP prompt's or a skill's text), and a
        problem to show instead ("" if none)."""
        mcp = await prompt_turn(self.runtime, text)
        if mcp is not None:
            return mcp
        return await asyncio.to_thread(skill_prompt, self.runtime, session.cwd, text)

    async def _stream(self, session: _Session, text: str, cancel: CancelToken) -> Done | None:
        asks: set[asyncio.Task[None]] = set()
        done: Done | None = None
        try:
            async for event in self.runtime.run(session.name, text, cancel=cancel):
                if isinstance(event, ToolApprovalRequired):
                    task = asyncio.ensure_future(self._ask(session, event))
                    asks.add(task)
                    task.add_done_callback(asks.discard)
                elif isinstance(event, Done):
                    done = event
                else:
                    await self._send(session.name, event)
        finally:
            for task in list(asks):
                task.cancel()
        return done

    async def _send(self, session_id: str, event: AgentEvent) -> None:
        update: Any = None
        if isinstance(event, TextDelta):
            update = acp.update_agent_message_text(event.text)
        elif isinstance(event, ThinkingDelta):
            update = acp.update_agent_thought_text(event.text)
        elif isinstance(event, ToolStart):
            arguments = _json_or_text(event.arguments)
            update = acp.start_tool_call(
                event.call_id,
                tool_title(event.name, arguments),
                kind=tool_kind(event.name),
                status="in_progress",
                raw_input=arguments,
            )
        elif isinstance(event, ToolEnd):
            update = acp.update_tool_call(
                event.call_id,
                status="failed" if event.is_error else "completed",
                content=[acp.tool_content(acp.text_block(event.result))],
            )
            await self.conn.session_update(session_id=session_id, update=update)
            entries = plan_from_todo(event.result) if event.name == "todo" else None
            if entries is None or event.is_error:
                return
            update = acp.update_plan(
                acp.plan_entry(text, status=status) for text, status in entries
            )
        elif isinstance(event, Halt) and event.reason == "cancelled":
            return  # the stop reason says so
        elif isinstance(event, ErrorEvent | Halt):
            update = acp.update_agent_message_text(f"\n\n[{event.type}] {event.message}\n")
        if update is not None:
            await self.conn.session_update(session_id=session_id, update=update)

    async def _ask(self, session: _Session, event: ToolApprovalRequired) -> None:
        """One approval, asked of the editor; a cancelled request is a denial, a failed one
        means no one could answer (the model is told so, not that the person said no)."""
        session.approvals[event.call_id] = event.session_key
        decision: ApprovalDecision = "deny"
        try:
            response = await self.conn.request_permission(
                session_id=session.name,
                tool_call=ToolCallUpdate(
                    tool_call_id=event.call_id,
                    title=f"{event.name}: {event.command}",
                    kind=tool_kind(event.name),
                    status="pending",
                    raw_input=event.command,
                ),
                options=self.access.permission_options(),
            )
            refusal = self.access.answer_refusal(getattr(response.outcome, "option_id", None))
            if refusal is None:
                decision = decision_for(response.outcome)
            else:
                update = acp.update_agent_message_text(f"\n\n[refused] {refusal}\n")
                await self.conn.session_update(session_id=session.name, update=update)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("session/request_permission failed; not running %s", event.call_id)
            decision = UNAVAILABLE
        finally:
            session.approvals.pop(event.call_id, None)
            self.runtime.respond_to(event.session_key, event.call_id, decision)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.cancel is None:
            return
        session.cancel.cancel("cancelled by the editor")
        # A turn waiting on an approval stops now, not when the approval times out.
        for call_id, key in list(session.approvals.items()):
            with contextlib.suppress(Exception):
                self.runtime.respond_to(key, call_id, "deny")

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def _json_or_text(arguments: str) -> Any:
    import json

    try:
        return json.loads(arguments)
    except ValueError:
        return arguments


def _editor_server(server: Any) -> EditorServer:
    """An ACP MCP server description (stdio, http) as our own."""
    if getattr(server, "url", None):
        headers = {h.name: h.value for h in getattr(server, "headers", None) or ()}
        return EditorServer(name=server.name, url=server.url, headers=headers)
    env = {e.name: e.value for e in getattr(server, "env", None) or ()}
    return EditorServer(name=server.name, command=(server.command, *(server.args or ())), env=env)


def _replay(message: Any) -> list[Any]:
    """Session updates that show a stored message again (`session/load`)."""
    if message.role == "user" and message.content:
        return [acp.update_user_message_text(message.content)]
    if message.role == "assistant":
        updates: list[Any] = []
        if message.content:
            updates.append(acp.update_agent_message_text(message.content))
        for call in message.tool_calls:
            arguments = _json_or_text(call.arguments)
            updates.append(
                acp.start_tool_call(
                    call.id,
                    tool_title(call.name, arguments),
                    kind=tool_kind(call.name),
                    status="completed",
                    raw_input=arguments,
                )
            )
        return updates
    if message.role == "tool" and message.tool_call_id:
        return [
            acp.update_tool_call(
                message.tool_call_id,
                status="completed",
                content=[acp.tool_content(acp.text_block(message.content))],
            )
        ]
    return []

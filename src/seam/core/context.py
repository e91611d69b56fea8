"""The system prompt, assembled in a fixed order and kept byte-identical within a session.

Order: the personality's SOUL.md, short guidance for the tools it has, the skills index
(only with `skill_view` in the toolset), the memory snapshot, then project context files
(AGENTS.md in the working directory). Providers
cache the prompt prefix, so a prompt that changes between turns pays full price every
turn: the memory snapshot is frozen per session by the memory provider, and the project
files and the skills index are read once per session here (and again only after a
compaction, which rewrites the history anyway). A deliberate change (an edited SOUL.md,
a different toolset) shows on the next turn. Sessions that start at the same moment in
the same place (a burst of new conversations) share one read that is under way rather
than each starting its own: what they get is what a read of their own would have found.

Project files are untrusted: a cloned repository can carry an AGENTS.md written to steer
the agent. Each is capped and passed through an injected scanner; flagged content is not
included verbatim and the person is told once per session.
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from seam.contracts.context import BuiltPrompt, PromptInputs
from seam.contracts.storage import Storage, StorageError

log = logging.getLogger("seam.context")

DEFAULT_CONTEXT_FILES: tuple[str, ...] = ("AGENTS.md",)
MAX_FILE_CHARS = 20_000
MAX_SESSIONS = 512

# Text in, the kinds of what it found out (empty: clean). Wiring passes the injection
# scanner; core does not know it.
Scanner = Callable[[str], Sequence[str]]
# (kind, message) of a `notice` event.
NoticeText = tuple[str, str]
# The skills index section and notices for skills left out, for a session's working
# directory (None: the runtime's); wiring reads the skills.
SkillsIndex = Callable[[str | None], Awaitable[tuple[str, Sequence[NoticeText]]]]
SKILL_TOOL = "skill_view"
T = TypeVar("T")
FileSections = tuple[str, tuple[NoticeText, ...]]


@dataclass(slots=True)
class _Entry:
    files: str
    skills: str = ""
    fingerprint: tuple[str, tuple[str, ...], str | None] | None = None
    system: str = ""


class DefaultContextBuilder:
    """The default `ContextBuilder`; its only state is the per-session cache."""

    def __init__(
        self,
        *,
        guidance: Mapping[str, str] | None = None,
        files: Sequence[str] = DEFAULT_CONTEXT_FILES,
        max_file_chars: int = MAX_FILE_CHARS,
        scanner: Scanner | None = None,
        skills: SkillsIndex | None = None,
    ) -> None:
        # Tool name -> one line on when to use it; only enabled tools' lines are sent.
        self.guidance = dict(guidance or {})
        self.files = tuple(files)
        self.max_file_chars = max_file_chars
        self.scanner = scanner
        self.skills = skills
        self._sessions: OrderedDict[str, _Entry] = OrderedDict()
        # Reads under way, by what they read (see `_shared`).
        self._reading: dict[Hashable, asyncio.Future[Any]] = {}

    async def build(self, session_key: str, inputs: PromptInputs) -> BuiltPrompt:
        entry = self._sessions.get(session_key)
        notices: tuple[NoticeText, ...] = ()
        if entry is None:
            files, notices = await self._files(inputs.storage)
            skills = ""
            if self.skills is not None:
                skills, skill_notices = await self._skills(self.skills, inputs.working_dir)
                if SKILL_TOOL in inputs.tool_names:  # no skills offered: nothing to tell
                    notices += tuple(skill_notices)
            entry = self._sessions[session_key] = _Entry(files, skills)
            if len(self._sessions) > MAX_SESSIONS:
                self._sessions.popitem(last=False)
        else:
            self._sessions.move_to_end(session_key)
        fingerprint = (inputs.soul, tuple(inputs.tool_names), inputs.memory)
        if entry.fingerprint != fingerprint:
            entry.fingerprint = fingerprint
            skills = entry.skills if SKILL_TOOL in inputs.tool_names else ""
            entry.system = self._assemble(inputs, entry.files, skills)
        return BuiltPrompt(entry.system, notices)

    def invalidate(self, session_key: str) -> None:
        """Forget the session's project files: the next build reads them again."""
        self._sessions.pop(session_key, None)

    def guidance_for(self, tool_names: Sequence[str]) -> str:
        lines = [self.guidance[name] for name in sorted(set(tool_names)) if name in self.guidance]
        return "## Using tools\n" + "\n".join(f"- {line}" for line in lines) if lines else ""

    def _assemble(self, inputs: PromptInputs, files: str, skills: str = "") -> str:
        guidance = self.guidance_for(inputs.tool_names)
        parts = [inputs.soul.strip(), guidance, skills, (inputs.memory or "").strip(), files]
        return "\n\n".join(part for part in parts if part)

    async def _files(self, storage: Storage) -> FileSections:
        """The project files as `storage` sees them; one read for every session that
        asks while it is under way with the same view (working directory and reach)."""
        view: Hashable | None = getattr(storage, "view", None)
        if view is None:
            return await self._read_files(storage)
        return await self._shared(("files", view), lambda: self._read_files(storage))

    async def _skills(
        self, index: SkillsIndex, working_dir: str | None
    ) -> tuple[str, Sequence[NoticeText]]:
        return await self._shared(("skills", working_dir), lambda: index(working_dir))

    async def _shared(self, key: Hashable, read: Callable[[], Awaitable[T]]) -> T:
        """`read()`, or the result of the same read another session started and that is
        still under way: sessions starting together make one read, not one each. The
        read runs as its own task, so one session stopping does not stop the others'."""
        pending = self._reading.get(key)
        if pending is None:
            pending = asyncio.ensure_future(read())
            self._reading[key] = pending
            pending.add_done_callback(lambda _: self._reading.pop(key, None))
        result: T = await asyncio.shield(pending)
        return result

    async def _read_files(self, storage: Storage) -> FileSections:
        sections: list[str] = []
        notices: list[NoticeText] = []
        for name in self.files:
            try:
                text = await storage.read_text(name)
            except StorageError:  # missing, outside the personality's reach, or denied
                continue
            except (OSError, UnicodeDecodeError) as exc:
                log.warning("could not read %s: %s", name, exc)
                continue
            text = text.strip()
            if not text:
                continue
            limit = self.max_file_chars
            if len(text) > limit:
                text = (
                    f"{text[:limit]}\n[… {name} truncated: {limit:,} of {len(text):,} chars shown]"
                )
            kinds = list(dict.fromkeys(self.scanner(text))) if self.scanner else []
            if kinds:
                found = ", ".join(kinds)
                sections.append(
                    f"## Project context ({name})\n({name} was left out: it looks like a prompt"
                    f" injection ({found}).)"
                )
                notices.append(
                    (
                        "injection",
                        f"{name} in the working directory looks like a prompt injection"
                        f" ({found}); it was left out of the prompt",
                    )
                )
                continue
            sections.append(f"## Project context ({name})\n{text}")
        return "\n\n".join(sections), tuple(notices)

"""An ACP session on the runtime: its working directory (the editor's project), the
skills offered there as `/<skill-name>` commands, and its stored transcript."""

from __future__ import annotations

import re
from pathlib import Path

from seam.contracts.messages import Message
from seam.wiring.runtime import Runtime

_SKILL_COMMAND = re.compile(r"/(?P<name>[a-z0-9][a-z0-9-]*)(?:\s+(?P<rest>.*))?", re.DOTALL)


async def set_working_dir(runtime: Runtime, session: str, cwd: str) -> None:
    """Run the ACP session's turns in `cwd`, the editor's project: its tools, sandbox
    view, AGENTS.md and `.agents/skills` are there, whatever other sessions use, so
    sessions in different projects run their turns side by side."""
    from seam.wiring.skills import offer_skills_in

    await runtime.set_working_dir(session, cwd)
    await offer_skills_in(runtime, cwd)


async def stored_messages(runtime: Runtime, session: str) -> list[Message] | None:
    """The transcript of a stored session (a public name), or None if there is none."""
    await runtime.open()
    try:
        key = runtime.session_key_for(session)
    except ValueError:  # a reserved name is never an editor's session
        return None
    if await runtime.store.get(key) is None:
        return None
    return await runtime.store.messages(key)


def skill_commands(runtime: Runtime, cwd: str) -> list[tuple[str, str]]:
    """(name, description) of the skills offered in `cwd`: the `/<skill-name>` commands
    the editor lists for a session there (none when skills are not configured)."""
    if runtime.settings is None or runtime.skills is None:
        return []
    from seam.wiring.skills import skill_commands as offered

    try:
        return offered(runtime.settings, Path(cwd))
    except OSError:
        return []


def skill_prompt(runtime: Runtime, cwd: str, text: str) -> tuple[str, str]:
    """A prompt as the turn runs it, and a problem to show instead ("" if none): as in
    `seam chat`, `/<skill-name> rest` is the skill's instructions, then `rest`; a
    `/word` that names no skill is sent as it is."""
    match = _SKILL_COMMAND.fullmatch(text.strip())
    if match is None or runtime.settings is None or runtime.skills is None:
        return text, ""
    from seam.wiring.skills import SkillError, UnknownSkill, skill_turn_text

    try:
        return skill_turn_text(runtime.settings, match["name"], match["rest"] or "", Path(cwd)), ""
    except UnknownSkill:
        return text, ""
    except (SkillError, OSError) as exc:
        return text, str(exc)


__all__ = ["set_working_dir", "skill_commands", "skill_prompt", "stored_messages"]

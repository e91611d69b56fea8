"""`skill_view` (load a skill's body or one of its files) and `skill_write` (draft one).

`skill_view` is the second step of progressive disclosure: the prompt only lists skills,
the body arrives when the model asks, with the folder its commands reach the skill at (in
the bubblewrap sandbox `/skills/<name>`, read-only; elsewhere its real path), so the
scripts it names can run. A `file` is a relative path inside the skill's folder; absolute
paths, `..` and symlinks leading out of it are refused. `skill_write`
writes only `$SEAM_HOME/skills/<name>/SKILL.md`, after the person approves (nobody to ask
is a refusal), and never through the file tools, which cannot write $SEAM_HOME at all.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from seam.contracts.guardrail import APPROVING
from seam.contracts.tool_approval import ask_person
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError, ToolRegistry
from seam.plugins.skills.catalog import SkillCatalog
from seam.plugins.skills.confined import read_confined, text_of
from seam.plugins.skills.skill import (
    DESCRIPTION_MAX,
    SKILL_FILE,
    Skill,
    SkillError,
    name_problem,
    parse_skill,
    render_skill_file,
)

MAX_FILE_CHARS = 60_000
MAX_LISTED_FILES = 50
MAX_BODY_CHARS = 40_000


class SkillViewTool(SpecTool):
    spec = ToolSpec(
        name="skill_view",
        description="Load a listed skill's instructions, or with `file` one of its files.",
        arguments={
            "name": {"type": "string"},
            "file": {"type": "string"},
        },
        required=("name",),
        concurrent=True,
        idempotent=True,
    )

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        view = self._view
        return await asyncio.to_thread(view, str(args["name"]), args.get("file"), ctx.sandbox)

    def _view(self, name: str, file: str | None, sandbox: object = None) -> str:
        try:
            skill = self.catalog.get(name)
        except SkillError as exc:
            raise ToolError(str(exc)) from None
        if file:
            return read_inside(skill.path, file)
        return render_body(skill, folder_seen(skill, sandbox))


def folder_seen(skill: Skill, sandbox: object) -> str:
    """Where the session's commands reach `skill`'s folder: under the sandbox's skills
    mount when it has one (bubblewrap: `/skills/<name>`), else its real path."""
    mount = getattr(sandbox, "skills_at", None) if sandbox is not None else None
    return f"{mount}/{skill.name}" if isinstance(mount, str) else str(skill.path)


def render_body(skill: Skill, folder: str | None = None) -> str:
    """What `skill_view NAME` returns: the body, where its folder is for commands (when
    known), then the files the skill has."""
    parts = [f"# Skill: {skill.name}"]
    if folder is not None:
        parts.append(
            f"Folder: {folder} (read-only; paths in these instructions are relative to it:"
            f" run a script with its interpreter, e.g. `python3 {folder}/scripts/...`)"
        )
    parts.append(skill.body or "(this skill has no instructions)")
    if skill.allowed_tools:
        parts.append("Tools this skill expects: " + ", ".join(skill.allowed_tools))
    files = skill_files(skill.path)
    if files:
        shown = files[:MAX_LISTED_FILES]
        more = f"\n(… {len(files) - len(shown)} more)" if len(files) > len(shown) else ""
        listing = "\n".join(f"- {path}" for path in shown)
        parts.append(f"Files in this skill (skill_view with file=...):\n{listing}{more}")
    return "\n\n".join(parts)


def skill_files(folder: Path) -> list[str]:
    """Relative paths of the skill's files other than SKILL.md, sorted."""
    found: list[str] = []
    for root, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            relative = (Path(root) / name).relative_to(folder).as_posix()
            if relative != SKILL_FILE and not name.startswith("."):
                found.append(relative)
    return found


def read_inside(folder: Path, file: str) -> str:
    """The text of `file` inside `folder`; ToolError for anything reaching outside."""
    relative = PurePosixPath(file.replace("\\", "/"))
    if not relative.parts or relative.is_absolute() or file.startswith("~"):
        raise ToolError(f"file must be a path inside the skill, not {file!r}")
    if ".." in relative.parts:
        raise ToolError(f"file must stay inside the skill ('..' refused): {file!r}")
    root = folder.resolve()
    target = (root / relative).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"{file!r} leads outside the skill (a symlink?); refused")
    if not target.is_file():
        raise ToolError(f"no file {file!r} in skill {folder.name!r}")
    try:
        data = read_confined(root, target)  # the file checked, not a link swapped in since
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ToolError(f"cannot read {file!r}: {why}") from None
    try:
        text = text_of(data)
    except UnicodeDecodeError:
        return f"[{file}: binary file, {len(data):,} bytes, not shown]"
    if len(text) > MAX_FILE_CHARS:
        text = f"{text[:MAX_FILE_CHARS]}\n[… truncated: {MAX_FILE_CHARS:,} of {len(text):,} chars]"
    return text


class SkillWriteTool(SpecTool):
    spec = ToolSpec(
        name="skill_write",
        description=(
            "Save a procedure as a new skill (the person approves): `description` says what it"
            " does and when to use it, `body` holds Markdown steps."
        ),
        arguments={
            "name": {"type": "string", "description": "lowercase-with-hyphens"},
            "description": {"type": "string"},
            "body": {"type": "string"},
            "overwrite": {"type": "boolean"},
        },
        required=("name", "description", "body"),
    )

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        home = self.catalog.home_dir
        if home is None:
            raise ToolError("skill_write is not configured (no skills folder)")
        name = str(args["name"])
        problem = name_problem(name)
        if problem:
            raise ToolError(f"{problem} (got {name!r})")
        description = " ".join(str(args["description"]).split())
        body = str(args["body"]).strip()
        if not description or not body:
            raise ToolError("description and body must not be empty")
        if len(description) > DESCRIPTION_MAX or len(body) > MAX_BODY_CHARS:
            raise ToolError(
                f"too long: description at most {DESCRIPTION_MAX:,} characters,"
                f" body at most {MAX_BODY_CHARS:,}"
            )
        folder = home / name
        text = render_skill_file(name, description, body)
        try:
            parse_skill(folder, text)
        except SkillError as exc:
            raise ToolError(f"not a valid skill: {exc}") from None
        if self.catalog.scanner is not None:
            kinds = list(dict.fromkeys(self.catalog.scanner(f"{description}\n\n{body}")))
            if kinds:
                found = ", ".join(kinds)
                raise ToolError(f"refused: the text looks like a prompt injection ({found})")
        target = folder / SKILL_FILE
        exists = target.exists()
        if exists and not args.get("overwrite"):
            raise ToolError(f"skill {name!r} exists at {target}; pass overwrite=true to replace it")
        await self._approve(ctx, target, description, replacing=exists)
        await asyncio.to_thread(_write, home, folder, target, text)
        return f"wrote {target} ({len(text):,} chars); it is listed from the next session"

    async def _approve(
        self, ctx: ToolContext, target: Path, description: str, *, replacing: bool
    ) -> None:
        verb = "replace" if replacing else "create"
        answer = await ask_person(
            ctx,
            tool=self.name,
            command=f"skill_write {verb} {target}",
            reason=f"a new skill for later sessions: {description[:200]}",
        )
        if answer not in APPROVING:
            raise ToolError("refused: the person denied skill_write")


def _write(home: Path, folder: Path, target: Path, text: str) -> None:
    """Write `text` to `target`, refusing a folder that a symlink leads out of `home`."""
    home.mkdir(parents=True, exist_ok=True)
    folder.mkdir(exist_ok=True)
    root = home.resolve()
    if folder.is_symlink() or folder.resolve().parent != root or target.is_symlink():
        raise ToolError(f"refused: {folder} is not a plain folder inside {home}")
    temporary = folder / f".{SKILL_FILE}.tmp"
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(target)


def register_skill_tools(registry: ToolRegistry, catalog: SkillCatalog) -> None:
    """`skill_view` (the skills of the session's working directory) and `skill_write`
    over `catalog`; one tool object per catalog, so its definition is built once. Both
    are left out of a session working where no skill is offered (`has_skills`)."""
    views: dict[int, SkillViewTool] = {}
    writer = SkillWriteTool(catalog)

    def view(ctx: ToolContext) -> SkillViewTool | None:
        seen = catalog.at(ctx.working_dir)
        if not seen.has_skills():
            return None
        tool = views.get(id(seen))
        if tool is None or tool.catalog is not seen:
            if len(views) > 64:
                views.clear()
            tool = views[id(seen)] = SkillViewTool(seen)
        return tool

    registry.register("skill_view", view)

    def write(ctx: ToolContext) -> SkillWriteTool | None:
        return writer if catalog.at(ctx.working_dir).has_skills() else None

    registry.register("skill_write", write)

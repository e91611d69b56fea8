"""One skill folder: `SKILL.md` with YAML front matter, parsed and checked.

The agentskills.io format: `name` (1-64 lowercase letters, digits and single hyphens,
the folder's own name), `description` (1-1024 characters, what the skill does and when
to use it), optional `license`, `compatibility`, `metadata` (a mapping) and
`allowed-tools`; the Markdown after the front matter is the body the agent loads. Other fields are
ignored, so skills written for other agents still load.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seam.plugins.skills.confined import read_confined, text_of

SKILL_FILE = "SKILL.md"
NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
MAX_SKILL_BYTES = 200_000
_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


class SkillError(ValueError):
    """A SKILL.md that does not make a valid skill; the message says what is wrong."""


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path  # the skill's folder
    body: str
    license: str = ""
    compatibility: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()


def name_problem(name: str) -> str:
    """Why `name` is not a valid skill name ("" when it is)."""
    if not name or len(name) > NAME_MAX:
        return f"name must be 1-{NAME_MAX} characters"
    if not _NAME.match(name):
        return "name must be lowercase letters, digits and single hyphens (not at the ends)"
    return ""


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """The front matter (a mapping) and the body of a SKILL.md text."""
    text = text.removeprefix("\ufeff")
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        raise SkillError("SKILL.md must start with YAML front matter between '---' lines")
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            break
    else:
        raise SkillError("the front matter has no closing '---' line")
    import yaml  # here, not at import: a runtime that never reads a skill skips it

    try:
        data = yaml.safe_load("".join(lines[1:end]))
    except yaml.YAMLError as exc:
        raise SkillError(f"front matter is not valid YAML: {_first_line(exc)}") from None
    if not isinstance(data, dict):
        raise SkillError("front matter must be a mapping (name: ..., description: ...)")
    return data, "".join(lines[end + 1 :]).strip()


def parse_skill(folder: Path, text: str) -> Skill:
    """The skill in `folder` whose SKILL.md reads `text`; raises SkillError."""
    data, body = split_front_matter(text)
    name = data.get("name")
    if not isinstance(name, str):
        raise SkillError("front matter needs a 'name' (a string)")
    problem = name_problem(name)
    if problem:
        raise SkillError(f"{problem} (got {name!r})")
    if name != folder.name:
        raise SkillError(f"name {name!r} must match its folder's name {folder.name!r}")
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        raise SkillError("front matter needs a 'description' (a non-empty string)")
    description = " ".join(description.split())
    if len(description) > DESCRIPTION_MAX:
        raise SkillError(f"description is over {DESCRIPTION_MAX} characters")
    compatibility = _text(data, "compatibility")
    if len(compatibility) > COMPATIBILITY_MAX:
        raise SkillError(f"compatibility is over {COMPATIBILITY_MAX} characters")
    metadata = data.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise SkillError("metadata must be a mapping")
    tools = data.get("allowed-tools") or ()
    if isinstance(tools, str):
        tools = tools.split()
    if not isinstance(tools, (list, tuple)) or not all(isinstance(t, str) for t in tools):
        raise SkillError("allowed-tools must be a space-separated string or a list")
    return Skill(
        name=name,
        description=description,
        path=folder,
        body=body,
        license=_text(data, "license"),
        compatibility=compatibility,
        metadata={str(k): v for k, v in metadata.items()},
        allowed_tools=tuple(tools),
    )


def load_skill(folder: Path, *, confined: bool = False) -> Skill:
    """Read and parse `folder/SKILL.md`; raises SkillError (OS errors included).

    `confined` (a skill in the working directory, where a sandboxed command can write):
    SKILL.md must stay inside the folder, and is read from exactly the file checked
    (`read_confined`), never through a link swapped in after the check."""
    path = folder / SKILL_FILE
    try:
        if confined:
            root = folder.resolve()
            data = read_confined(root, path.resolve(), MAX_SKILL_BYTES)
        else:
            if path.stat().st_size > MAX_SKILL_BYTES:
                raise SkillError(f"SKILL.md is over {MAX_SKILL_BYTES:,} bytes")
            data = path.read_bytes()
        text = text_of(data)
    except UnicodeDecodeError:
        raise SkillError("SKILL.md is not UTF-8 text") from None
    except OSError as exc:
        raise SkillError(f"cannot read SKILL.md: {exc.strerror or exc}") from None
    except ValueError as exc:  # over the size, or not a regular file
        raise SkillError(str(exc)) from None
    return parse_skill(folder, text)


def render_skill_file(name: str, description: str, body: str) -> str:
    """A SKILL.md text for a new skill (what `skill_write` writes)."""
    import yaml

    front = yaml.safe_dump(
        {"name": name, "description": description}, sort_keys=False, allow_unicode=True
    )
    return f"---\n{front}---\n\n{body.strip()}\n"


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise SkillError(f"{key} must be a string")
    return value.strip()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

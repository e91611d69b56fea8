"""Scripts of Agent Skills: which skill folder a command runs a file from.

A skill's script runs like any program in the sandbox, but whether the skill was reviewed
matters: a trusted skill's script runs unasked (the sandbox still keeps secrets and home
out of reach), one from a skill nobody trusted (a cloned repository's `.agents/skills`)
asks. The walk notes the skill folder each command runs a file from (an interpreter's
script operand, or the program itself when named by path); once the walk is done, off the
analysis clock, the classifier asks which folders are trusted now (reading trust means
hashing files). Where skills live is given by wiring: the sandbox's `/skills` mount,
`$SEAM_HOME/skills`, `[skills] dirs`, and each working directory's `.agents/skills`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from seam.plugins.guardrail.normalize import canonical_path, script_operand

if TYPE_CHECKING:  # the shell grammar loads with the classifier, not with the settings
    from seam.plugins.guardrail.command import Cmd

UNTRUSTED_RULE = "skill:untrusted"
# A working directory (None: unknown) in, the skill folders trusted there (canonical).
TrustedFolders = Callable[[str | None], Collection[str]]


@dataclass(frozen=True)
class SkillPlaces:
    """Where skills live (`roots`, absolute; `project`, relative to a working directory)
    and which of their folders are trusted (`trusted`, asked after the walk)."""

    roots: tuple[str, ...] = ()
    project: str = ".agents/skills"
    trusted: TrustedFolders = field(default=lambda cwd: ())

    def canonical(self, home: str) -> SkillPlaces:
        roots = tuple(canonical_path(r.rstrip("/"), home=home, cwd=None) for r in self.roots)
        return SkillPlaces(roots, self.project.strip("/"), self.trusted)


def script_of(cmd: Cmd) -> str | None:
    """The file `cmd` runs as a program: an interpreter's script, or argv0 given by path."""
    script = script_operand(cmd.name, cmd.args)
    if script is None and "/" in cmd.argv0:
        script = cmd.argv0
    if script is None or "$" in script or "`" in script:
        return None
    return script


def skill_folder(places: SkillPlaces, cmd: Cmd, start: str | None) -> tuple[str, str] | None:
    """(the word, the skill folder) when `cmd` runs a file inside a skill's folder;
    `start`: the session's working directory (canonical), where `.agents/skills` is."""
    word = script_of(cmd)
    if word is None:
        return None
    path = cmd.path(word)
    roots = list(places.roots)
    if start is not None and places.project:
        roots.append(canonical_path(places.project, home=cmd.home, cwd=start))
    for root in roots:
        if not path.startswith(root.rstrip("/") + "/"):
            continue
        name, _, rest = path[len(root.rstrip("/")) + 1 :].partition("/")
        if name and rest:
            return word, f"{root.rstrip('/')}/{name}"
    return None


def untrusted_reason(folder: str) -> str:
    return (
        f"runs a script of a skill that is not trusted here ({folder}); review it, then:"
        " seam skills trust PATH"
    )

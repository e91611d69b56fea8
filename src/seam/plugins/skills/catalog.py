"""Skills found on disk, in precedence order, and the index the system prompt carries.

Directories are searched in the order given (wiring: `<working dir>/.agents/skills`,
`$SEAM_HOME/skills`, then `[skills] dirs`); for one name the first skill that may be
offered wins. The working directory is the session's: `SkillCatalog.at(dir)` is the same
catalog seen from another one (an editor's project, over ACP). A skill is left out, with
the reason kept for listings, when its SKILL.md is invalid, when it comes from the
working directory and is not trusted at its current content, or when the injection
scanner flags its text. Everything is read again on each call: the index is frozen per
session by the context builder, while `skill_view` must see the trust and content of now.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from seam.plugins.skills.skill import SKILL_FILE, Skill, SkillError, load_skill
from seam.plugins.skills.trust import TrustStore

Origin = Literal["project", "home", "config"]
# Text in, the kinds of what it found (empty: clean); wiring passes the injection scanner.
Scanner = Callable[[str], Sequence[str]]
NoticeText = tuple[str, str]
DEFAULT_INDEX_CHARS = 3_000
INDEX_HEADER = "## Skills\nWhen a skill fits the task, load it with `skill_view` before you act."
SHORTEST_DESCRIPTION = 40
# Working directories whose catalogs `SkillCatalog.at` keeps (an editor opens a few).
MAX_WORKING_DIRS = 64


class UnknownSkill(SkillError):
    """No skill folder of that name was found at all."""


@dataclass(frozen=True, slots=True)
class SkillDir:
    path: Path
    origin: Origin


@dataclass(frozen=True, slots=True)
class Entry:
    """One skill folder found, offered or not."""

    name: str
    folder: Path
    origin: Origin
    skill: Skill | None
    problem: str = ""  # why it is not offered; "" when it is

    @property
    def offered(self) -> bool:
        return not self.problem and self.skill is not None


class SkillCatalog:
    def __init__(
        self,
        dirs: Sequence[SkillDir],
        trust: TrustStore,
        *,
        scanner: Scanner | None = None,
        index_chars: int = DEFAULT_INDEX_CHARS,
        home_dir: Path | None = None,
        project: Path | None = None,
    ) -> None:
        self.dirs = tuple(dirs)
        self.trust_store = trust
        self.scanner = scanner
        self.index_chars = index_chars
        # Where `skill_write` drafts new skills ($SEAM_HOME/skills).
        self.home_dir = home_dir
        # The project folder relative to a working directory (`.agents/skills`): `at`
        # moves the "project" entry of `dirs` to another working directory.
        self.project = project
        self._at: dict[Path, SkillCatalog] = {}
        # Whether any skill is offered here (`has_skills`), remembered once looked at.
        self._has: bool | None = None

    def at(self, working_dir: str | Path) -> SkillCatalog:
        """This catalog as a session working in `working_dir` sees it: the project skills
        are that directory's (the other folders and the trust file are the same). A
        relative `working_dir` (a context built outside any session) keeps this one's."""
        where = Path(working_dir)
        if self.project is None or not where.is_absolute():
            return self
        folder = where / self.project
        if any(d.origin == "project" and d.path == folder for d in self.dirs):
            return self
        found = self._at.get(folder)
        if found is None:
            dirs = [SkillDir(folder, "project")]
            dirs += [d for d in self.dirs if d.origin != "project"]
            found = SkillCatalog(
                dirs,
                self.trust_store,
                scanner=self.scanner,
                index_chars=self.index_chars,
                home_dir=self.home_dir,
            )
            if len(self._at) >= MAX_WORKING_DIRS:
                self._at.pop(next(iter(self._at)))
            self._at[folder] = found
        return found

    def entries(self) -> list[Entry]:
        found: list[Entry] = []
        winners: dict[str, Path] = {}
        for where in self.dirs:
            for folder in _skill_folders(where.path):
                entry = self._judge(folder, where.origin)
                if entry.offered:
                    if entry.name in winners:
                        entry = _refuse(entry, f"shadowed by {winners[entry.name]}")
                    else:
                        winners[entry.name] = folder
                found.append(entry)
        return found

    def offered(self) -> list[Skill]:
        skills = [e.skill for e in self.entries() if e.offered and e.skill is not None]
        self._has = bool(skills)
        return sorted(skills, key=lambda skill: skill.name)

    def has_skills(self) -> bool:
        """Whether any skill is offered here, as last seen (looked at once, then kept
        until `offered` runs again): it decides whether a session working here gets the
        skill tools, so sessions elsewhere do not pay their prompt tokens."""
        if self._has is None:
            self.offered()
        return bool(self._has)

    def get(self, name: str) -> Skill:
        """The offered skill `name`; SkillError says why there is none."""
        reasons: list[str] = []
        for entry in self.entries():
            if entry.name != name:
                continue
            if entry.offered and entry.skill is not None:
                return entry.skill
            reasons.append(f"{entry.folder}: {entry.problem}")
        if reasons:
            raise SkillError(f"skill {name!r} is not offered: " + "; ".join(reasons))
        known = ", ".join(skill.name for skill in self.offered()) or "none"
        raise UnknownSkill(f"no skill named {name!r} (skills: {known})")

    def index(self) -> tuple[str, tuple[NoticeText, ...]]:
        """The system prompt's skills section ("" when none is offered) and notices for
        the skills left out."""
        entries = self.entries()
        skills = sorted(
            (e.skill for e in entries if e.offered and e.skill is not None), key=lambda s: s.name
        )
        return render_index(skills, self.index_chars), notices_for(entries)

    def _judge(self, folder: Path, origin: Origin) -> Entry:
        name = folder.name
        if origin == "project" and folder.is_symlink():
            return Entry(name, folder, origin, None, "a symlink in the working directory")
        try:
            skill = load_skill(folder, confined=origin == "project")
        except SkillError as exc:
            return Entry(name, folder, origin, None, f"invalid: {exc}")
        entry = Entry(skill.name, folder, origin, skill)
        if origin == "project" and not self.trust_store.trusted(folder):
            return _refuse(entry, f"untrusted (run: seam skills trust {folder})")
        if self.scanner is not None:
            kinds = list(dict.fromkeys(self.scanner(f"{skill.description}\n\n{skill.body}")))
            if kinds:
                found = ", ".join(kinds)
                return _refuse(entry, f"refused: looks like a prompt injection ({found})")
        return entry


def _refuse(entry: Entry, problem: str) -> Entry:
    return Entry(entry.name, entry.folder, entry.origin, entry.skill, problem)


def _skill_folders(path: Path) -> list[Path]:
    try:
        children = sorted(path.iterdir())
    except OSError:  # missing or unreadable: no skills there
        return []
    return [child for child in children if (child / SKILL_FILE).is_file()]


def notices_for(entries: Sequence[Entry]) -> tuple[NoticeText, ...]:
    notices: list[NoticeText] = []
    untrusted = [e for e in entries if e.problem.startswith("untrusted")]
    if untrusted:
        names = ", ".join(e.name for e in untrusted)
        notices.append(
            (
                "skills",
                f"{len(untrusted)} skill(s) in the working directory are not trusted and were"
                f" left out: {names} (review them, then: seam skills trust PATH)",
            )
        )
    for entry in entries:
        if entry.problem.startswith("refused"):
            notices.append(("injection", f"skill {entry.name} ({entry.folder}) {entry.problem}"))
        elif entry.problem.startswith("invalid"):
            notices.append(("skills", f"skill at {entry.folder} is {entry.problem}"))
    return tuple(notices)


def render_index(skills: Sequence[Skill], budget: int) -> str:
    """Name and description of each skill, within `budget` characters: descriptions are
    shortened first, then left out, then names dropped, and the section says which."""
    if not skills:
        return ""
    full = _with_descriptions(skills, None)
    if len(full) <= budget:
        return full
    longest = max(len(skill.description) for skill in skills)
    low, high, best = SHORTEST_DESCRIPTION, longest, None
    while low <= high:  # the longest per-description cap that fits
        middle = (low + high) // 2
        text = _with_descriptions(skills, middle)
        if len(text) <= budget:
            best, low = text, middle + 1
        else:
            high = middle - 1
    if best is not None:
        return best
    note = "\n(Descriptions left out to fit the index budget.)"
    for count in range(len(skills), 0, -1):
        names = [skill.name for skill in skills[:count]]
        rest = len(skills) - count
        more = f"\n(… and {rest} more not listed: over the index budget.)" if rest else ""
        text = f"{INDEX_HEADER}\n- " + ", ".join(names) + note + more
        if len(text) <= budget:
            return text
    return f"{INDEX_HEADER}\n({len(skills)} skills not listed: over the index budget.)"[:budget]


def _with_descriptions(skills: Sequence[Skill], cap: int | None) -> str:
    lines = [INDEX_HEADER]
    for skill in skills:
        description = skill.description
        if cap is not None and len(description) > cap:
            description = description[: cap - 1].rstrip() + "…"
        lines.append(f"- {skill.name}: {description}")
    if cap is not None:
        lines.append("(Descriptions shortened to fit the index budget.)")
    return "\n".join(lines)

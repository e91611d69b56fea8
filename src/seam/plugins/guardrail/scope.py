"""The state of one classification (`Scope`): findings, and what a script sets up for its
later commands (directory, variables, downloaded and written files), with the expansion of
known variables under a budget. `Policy` is what it needs of the classifier."""

from __future__ import annotations

import re
from typing import Protocol

from seam.contracts.guardrail import Verdict
from seam.plugins.guardrail.allowlist import Kind
from seam.plugins.guardrail.command import Cmd, Rule
from seam.plugins.guardrail.echo import fold_echo, printed
from seam.plugins.guardrail.rules import DOWNLOADERS
from seam.plugins.guardrail.shell import Clock, OverBudget
from seam.plugins.guardrail.skill_runs import SkillPlaces

EXPANSION_BUDGET = 1_000_000  # characters variable expansion may produce in all
MAX_WORD = 65_536  # characters one expanded word or variable may have
CHANGES_FILES = "allow:changes-files"

_SEVERITY: dict[Verdict, int] = {"safe": 0, "needs_approval": 1, "forbidden": 2}
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=")
_DEFAULT_IFS = " \t\n"
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})


class Policy(Protocol):
    """What a classification reads of its classifier (`CommandClassifier`)."""

    home: str
    protected: tuple[str, ...]
    spellings: tuple[set[str], ...]
    deny: tuple[str, ...]
    allow: tuple[str, ...]
    cpu_budget: float
    skills: SkillPlaces | None

    def resolve(self, full: str) -> str | None: ...

    def floor_for(self, program: str) -> tuple[Rule, ...]: ...

    def patterns_for(self, program: str) -> tuple[Rule, ...]: ...


class Scope:
    """One classification's state: the most severe finding so far and what the script set
    up (directory, variables, downloads, written scripts), with the budget it may spend."""

    __slots__ = (
        "allowed_by",
        "classifier",
        "cwd",
        "deadline",
        "downloads",
        "expanded",
        "finding",
        "kind",
        "malformed",
        "proofs",
        "root",
        "skill_runs",
        "unconfined",
        "variables",
        "written",
    )

    def __init__(self, classifier: Policy) -> None:
        self.classifier = classifier
        self.deadline = Clock.after(classifier.cpu_budget)
        self.expanded = 0  # characters produced by expansion so far
        self.kind: Kind = "read"  # the widest thing a proven command does
        self.malformed = False  # the command itself could not be parsed
        self.finding: tuple[Verdict, str, str] | None = None
        self.allowed_by = ""
        self.variables: dict[str, str] = {}
        self.cwd: str | None = None
        self.root: str | None = None  # where the command starts, canonical, when known
        self.proofs: dict[str, Kind] = {}  # each simple command's proof, by program
        self.unconfined = ""  # the first word that reads outside the working directory
        self.downloads: set[str] = set()  # files a downloader wrote earlier in the script
        self.written: dict[str, str] = {}  # scripts written earlier (`echo .. > x.sh`), by path
        # Skill folders a command runs a file from, and whether that folder lies in a
        # protected place (`$SEAM_HOME/skills`): judged once the walk is done.
        self.skill_runs: dict[str, bool] = {}

    def note(self, verdict: Verdict, rule: str, reason: str) -> None:
        """Keep the most severe finding, the first of its severity; a plain change of
        files gives way to a more specific reason to ask (`curl -o x && sh x`)."""
        found = self.finding
        worse = found is None or _SEVERITY[verdict] > _SEVERITY[found[0]]
        sharper = (
            found is not None
            and found[1] == CHANGES_FILES
            and verdict == found[0]
            and rule != CHANGES_FILES
        )
        if worse or sharper:
            self.finding = (verdict, rule, reason)

    def result(self) -> tuple[Verdict, str, str]:
        if self.finding is not None:
            return self.finding
        if self.allowed_by:
            return "safe", f"user:allow:{self.allowed_by}", "matches an allow rule in your config"
        # Nothing doubted: every simple command was proven, and the rule says how.
        proofs = " · ".join(f"{name}: {kind}" for name, kind in self.proofs.items())
        return "safe", f"proof:{self.kind}", proofs or "nothing runs"

    def spend(self) -> None:
        if self.deadline.past():
            raise OverBudget(f"more than {self.classifier.cpu_budget * 1000:g} ms of analysis")

    def track(self, cmd: Cmd) -> None:
        """Follow what a script sets up for its later commands: the directory (`cd / &&
        rm -rf *`), variables, downloaded files and scripts written with echo or cat."""
        if cmd.name in ("cd", "pushd"):
            operands = [a for a in cmd.args if not a.startswith("-")]
            path = cmd.path(operands[0] if operands else "~")
            known = path.startswith(("/", "~")) and "-" not in cmd.args and "$" not in path
            self.cwd = path if known else None
        elif cmd.name in _DECLARERS:
            for arg in cmd.args:
                if _ASSIGNMENT.match(arg):
                    self.assign(arg)
        elif cmd.name in DOWNLOADERS:
            self.downloads.update(cmd.writes)
            if cmd.name == "wget" and not cmd.writes:  # wget saves under the URL's name
                urls = (a for a in cmd.args if "://" in a)
                self.downloads.update(cmd.path(u.rstrip("/").rsplit("/", 1)[-1]) for u in urls)
        elif (text := printed(cmd)) is not None:
            for redirect in cmd.redirects:
                if redirect.op in (">", ">|", ">>"):
                    path = cmd.path(redirect.target)
                    earlier = self.written.get(path, "") if redirect.op == ">>" else ""
                    self.written[path] = f"{earlier}\n{text}" if earlier else text

    def assign(self, assignment: str) -> None:
        name, _, value = assignment.partition("=")
        if name.endswith("+"):
            name = name[:-1]
            value = self.variables.get(name, "") + value
        if len(value) > MAX_WORD:
            raise OverBudget(f"a variable would grow past {MAX_WORD} characters")
        self.variables[name.partition("[")[0]] = value

    def split(self, original: tuple[str, ...], expanded: tuple[str, ...]) -> tuple[str, ...]:
        """The words the shell would run: an unquoted expansion is split on $IFS, and
        quoting is no longer known here, so every changed word is (`a="rm -rf /"; $a`)."""
        if original == expanded:
            return expanded
        ifs = self.variables.get("IFS", "") + _DEFAULT_IFS
        separators = re.compile("[" + re.escape(ifs) + "]+")
        out: list[str] = []
        for before, after in zip(original, expanded, strict=True):
            if before == after:
                out.append(after)
            else:
                out.extend(p for p in separators.split(after) if p)
        return tuple(out)

    def expand(self, word: str) -> str:
        """Known variables substituted, `$(echo x)` folded to `x`; anything else is kept."""
        if "$" not in word and "`" not in word:
            return word
        if self.variables:
            variables = self.variables
            # Never build the expansion before knowing its size (`a=$a$a` 30 times is 1 GB).
            size = len(word) + sum(
                len(variables.get(m.group(1) or m.group(2), "")) for m in _VARIABLE.finditer(word)
            )
            if size > MAX_WORD or self.expanded + size > EXPANSION_BUDGET:
                raise OverBudget(f"variables would expand past {MAX_WORD} characters")
            self.expanded += size
            word = _VARIABLE.sub(
                lambda m: variables.get(m.group(1) or m.group(2), m.group(0)), word
            )
        if "$(" in word or "`" in word:
            deadline = self.deadline
            word = _SUBSTITUTION.sub(lambda m: fold_echo(m, deadline), word)
        return word

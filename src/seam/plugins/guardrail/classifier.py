"""`CommandClassifier`: is a shell command safe, in need of approval, or forbidden?

The command is parsed as the shell would read it (tree-sitter's bash grammar, see
`shell.py`), and every simple command in it is judged: each stage of each pipeline, each
`$(...)`, backtick and `<(...)`, each command a wrapper runs (`env`, `sh -c`, `eval`,
`xargs`, `find -exec`, ...), each here-document or echoed text fed to a shell. The most
severe verdict wins and names the rule that decided. Per command the order is: the floor
(and the protected paths), then the user's deny globs, then the user's allow globs, then
the dangerous patterns (which give a specific reason), then the allowlist
(`allowlist.py`): `safe` means every command was proven harmless, a known program with
known-harmless arguments; anything else needs approval. A user allow never lifts the
floor, and covers only the command it matches, not the other commands chained to it.

The work is bounded (`Budget`): a command whose analysis would take more than a few
milliseconds of CPU or expand variables past a small size needs approval, so an
adversarial command cannot exhaust the host.

The walk through a command is `walk.py` (its state and variable expansion `scope.py`,
Seam's protected paths `protect.py`, echoed text `echo.py`).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase

from seam.contracts.guardrail import Classification
from seam.plugins.guardrail.command import Rule
from seam.plugins.guardrail.normalize import canonical_path, strip_ansi
from seam.plugins.guardrail.protect import PROTECTED_REASON, PROTECTED_RULE
from seam.plugins.guardrail.rules import FLOOR, PATTERNS
from seam.plugins.guardrail.shell import OverBudget
from seam.plugins.guardrail.skill_runs import UNTRUSTED_RULE, SkillPlaces, untrusted_reason
from seam.plugins.guardrail.walk import MAX_DEPTH, Walk

__all__ = ["CPU_BUDGET", "MAX_CHARS", "MAX_DEPTH", "CommandClassifier"]

MAX_CHARS = 256_000  # a longer command is not read at all: it needs approval
CPU_BUDGET = 0.010  # seconds of CPU one classification may take
# One classification off the clock before the first real one (`_warm_up`).
# It takes every path a command can open (substitution, redirection, a heredoc to a shell).
WARM_UP_COMMAND = (
    "cd src && grep -rn 'x' . | sort > /tmp/out; echo $(ls -la) \"${HOME}\"; "
    "bash <<EOF\nrm -f /tmp/out\nEOF\n"
)
WARM_UP_BUDGET = 5.0
# The rule of a command whose check ran out of its CPU budget.
BUDGET_RULE = "budget:exceeded"
_warmed = False


class CommandClassifier:
    """Implements `Guardrail`. `home` is the person's home directory (so `/home/me/.bashrc`
    is seen as `~/.bashrc`); `deny` and `allow` are the user's globs, matched against
    each normalised command (shown by `seam guard check`). `protected`: paths no command
    may name (Seam's own home and store: its approvals, config and transcripts), forbidden
    whatever the user's rules say. `cpu_budget`: seconds of CPU one classification may
    spend before it gives up and asks. `realpath`: where a path really leads on disk
    (`os.path.realpath`, handed in by wiring), so a read through a symlink that leaves the
    working directory is not proven read-only; without it paths are judged as written.
    `skills`: where Agent Skills live and which are trusted (`skill_runs.py`): a script of
    a trusted skill runs like any proven command, one of an untrusted skill asks."""

    def __init__(
        self,
        *,
        deny: Iterable[str] = (),
        allow: Iterable[str] = (),
        home: str = "",
        protected: Iterable[str] = (),
        cpu_budget: float = CPU_BUDGET,
        realpath: Callable[[str], str] | None = None,
        skills: SkillPlaces | None = None,
    ) -> None:
        self.deny = tuple(deny)
        self._realpath = realpath
        self.allow = tuple(allow)
        self.cpu_budget = cpu_budget
        for glob in (*self.deny, *self.allow):
            if not isinstance(glob, str) or not glob.strip():
                raise ValueError(f"a guard rule must be a non-empty glob, got {glob!r}")
        self.home = home.rstrip("/")
        self.skills = None if skills is None else skills.canonical(self.home)
        self.protected = tuple(
            canonical_path(p.rstrip("/") or "/", home=self.home, cwd=None) for p in protected
        )
        # Each protected path as it may be spelled in a command: `~/.seam`, `/home/me/.seam`.
        self.spellings = tuple(
            {p, self.home + p[1:]} if p.startswith("~") and self.home else {p}
            for p in self.protected
        )
        self._floor, self._floor_any = _index(FLOOR)
        self._patterns, self._patterns_any = _index(PATTERNS)

    def resolve(self, full: str) -> str | None:
        """`full` (canonical) followed through its symlinks, canonical again; None when
        there is no `realpath` or the path cannot be read."""
        if self._realpath is None:
            return None
        path = self.home + full[1:] if full.startswith("~") and self.home else full
        if not path.startswith("/"):
            return None
        try:
            real = self._realpath(path)
        except (OSError, ValueError):
            return None
        return canonical_path(real, home=self.home, cwd=None)

    def floor_for(self, program: str) -> tuple[Rule, ...]:
        return self._floor.get(program, self._floor_any)

    def _warm_up(self) -> None:
        """Load the shell grammar and fill the caches once per process, off the clock:
        the CPU budget is for analysing a command, and a cold first load (the grammar's
        library, bytecode on a fresh checkout) must not turn a plain read into a question."""
        global _warmed
        _warmed = True
        budget, self.cpu_budget = self.cpu_budget, WARM_UP_BUDGET
        try:
            self.classify(WARM_UP_COMMAND)
        finally:
            self.cpu_budget = budget

    def patterns_for(self, program: str) -> tuple[Rule, ...]:
        return self._patterns.get(program, self._patterns_any)

    def classify(self, command: str, *, cwd: str | None = None) -> Classification:
        if not _warmed:
            self._warm_up()
        passes = _collector_passes()
        found = self._classify(command, cwd)
        if found.rule == BUDGET_RULE and _collector_passes() != passes:
            # The garbage collector ran on this thread's clock: a pass over a big heap
            # can take more than the whole budget, and then a plain read would ask. One
            # more try on a fresh budget; a command that is itself too costly runs out
            # again (at most twice the budget in all).
            found = self._classify(command, cwd)
        return found

    def _classify(self, command: str, cwd: str | None) -> Classification:
        if len(command) > MAX_CHARS:  # before anything else reads it
            reason = f"too long to check ({len(command)} characters)"
            return Classification("needs_approval", "parse:too-long", reason, command[:200])
        text = strip_ansi(command)
        walk = Walk(self)
        if cwd:
            walk.cwd = walk.root = canonical_path(cwd, home=self.home, cwd=None)
        try:
            normalized = walk.script(text, depth=0, bulk=False)
        except OverBudget as exc:
            # What was already found forbidden stays forbidden: padding a command until
            # its check runs out of time must not turn a refusal into a question.
            verdict, rule, reason = walk.result()
            if verdict == "forbidden":
                return Classification(verdict, rule, reason, text)
            reason = f"too costly to check ({exc}); a person should look at it"
            return Classification("needs_approval", BUDGET_RULE, reason, text)
        except RecursionError:
            reason = "quoting or substitutions nested too deeply to check"
            return Classification("needs_approval", "parse:too-deep", reason, text)
        except Exception as exc:  # a bug here must never make a command safe
            reason = f"the classifier failed ({type(exc).__name__}: {exc})"
            return Classification("needs_approval", "error:classifier", reason, text)
        for glob in self.deny:
            if fnmatchcase(normalized, glob):
                walk.note("forbidden", f"user:deny:{glob}", "matches a deny rule in your config")
        if walk.skill_runs:
            self._judge_skill_runs(walk, cwd)
        if walk.malformed:  # the flat form is not all that would run: show it as written
            normalized = text
        verdict, rule, reason = walk.result()
        read_only = verdict == "safe" and walk.kind == "read" and not walk.allowed_by
        read_only = read_only and not walk.unconfined
        return Classification(verdict, rule, reason, normalized, read_only)

    def _judge_skill_runs(self, walk: Walk, cwd: str | None) -> None:
        """Each skill folder the command runs a file from, against the skills trusted now
        (asked here, off the analysis clock: trust is read by hashing files)."""
        assert self.skills is not None
        try:
            found = self.skills.trusted(cwd)
        except Exception:  # trust that cannot be read trusts nothing
            found = ()
        trusted = {canonical_path(f, home=self.home, cwd=None) for f in found}
        for folder, in_protected in walk.skill_runs.items():
            if folder in trusted:
                continue
            if in_protected:
                walk.note("forbidden", PROTECTED_RULE, PROTECTED_REASON)
            else:
                walk.note("needs_approval", UNTRUSTED_RULE, untrusted_reason(folder))


def _index(rules: tuple[Rule, ...]) -> tuple[dict[str, tuple[Rule, ...]], tuple[Rule, ...]]:
    """Rules by program name (plus the rules for every program), keeping their order."""
    generic = tuple(r for r in rules if r.programs is None)
    names = {name for r in rules if r.programs is not None for name in r.programs}
    by_name = {
        name: tuple(r for r in rules if r.programs is None or name in r.programs) for name in names
    }
    return by_name, generic


def _collector_passes() -> int:
    """How many garbage collections this process has run (all generations)."""
    return sum(generation["collections"] for generation in gc.get_stats())

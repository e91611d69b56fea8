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
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from collections.abc import Callable, Iterable
from fnmatch import fnmatchcase

from seam.contracts.guardrail import Classification, Verdict
from seam.plugins.guardrail.allowlist import (
    ANY_ARGUMENTS,
    Doubt,
    Kind,
    prove,
    risky_assignment,
    widest,
)
from seam.plugins.guardrail.confine import outside
from seam.plugins.guardrail.grammar import evaluates, prints_environment, prints_variables
from seam.plugins.guardrail.normalize import (
    SHELLS,
    canonical_path,
    program_name,
    reads_program_from_stdin,
    render,
    script_operand,
    strip_ansi,
    unwrap,
)
from seam.plugins.guardrail.rules import DOWNLOADERS, FLOOR, PATTERNS, TEXT_FLOOR, Cmd, Rule
from seam.plugins.guardrail.shell import (
    Clock,
    OverBudget,
    Redirect,
    Simple,
    decode_c_escapes,
    parse,
)

MAX_DEPTH = 8  # wrappers and substitutions nested deeper than this need approval
MAX_CHARS = 256_000  # a longer command is not read at all: it needs approval
MAX_STAGES = 64  # a longer pipeline needs approval (each stage sees the ones before it)
CPU_BUDGET = 0.010  # seconds of CPU one classification may take
EXPANSION_BUDGET = 1_000_000  # characters variable expansion may produce in all
MAX_WORD = 65_536  # characters one expanded word or variable may have

_SEVERITY: dict[Verdict, int] = {"safe": 0, "needs_approval": 1, "forbidden": 2}
_JOINERS = {"&&": " && ", "||": " || ", "&": " & "}
_HEREDOCS = frozenset({"<<", "<<-"})
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`")
_ASSIGNMENT = re.compile(r"[A-Za-z_]\w*(?:\[[^\]]*\])?\+?=")
_ECHO_FLAGS = re.compile(r"-[neE]+")
_PRINTF_UNSUPPORTED = re.compile(r"%[^sb%]")
_DEFAULT_IFS = " \t\n"
_DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})


class CommandClassifier:
    """Implements `Guardrail`. `home` is the person's home directory (so `/home/me/.bashrc`
    is seen as `~/.bashrc`); `deny` and `allow` are the user's globs, matched against
    each normalised command (shown by `seam guard check`). `protected`: paths no command
    may name (Seam's own home and store: its approvals, config and transcripts), forbidden
    whatever the user's rules say. `cpu_budget`: seconds of CPU one classification may
    spend before it gives up and asks. `realpath`: where a path really leads on disk
    (`os.path.realpath`, handed in by wiring), so a read through a symlink that leaves the
    working directory is not proven read-only; without it paths are judged as written."""

    def __init__(
        self,
        *,
        deny: Iterable[str] = (),
        allow: Iterable[str] = (),
        home: str = "",
        protected: Iterable[str] = (),
        cpu_budget: float = CPU_BUDGET,
        realpath: Callable[[str], str] | None = None,
    ) -> None:
        self.deny = tuple(deny)
        self._realpath = realpath
        self.allow = tuple(allow)
        self.cpu_budget = cpu_budget
        for glob in (*self.deny, *self.allow):
            if not isinstance(glob, str) or not glob.strip():
                raise ValueError(f"a guard rule must be a non-empty glob, got {glob!r}")
        self.home = home.rstrip("/")
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

    def patterns_for(self, program: str) -> tuple[Rule, ...]:
        return self._patterns.get(program, self._patterns_any)

    def classify(self, command: str, *, cwd: str | None = None) -> Classification:
        if len(command) > MAX_CHARS:  # before anything else reads it
            reason = f"too long to check ({len(command)} characters)"
            return Classification("needs_approval", "parse:too-long", reason, command[:200])
        text = strip_ansi(command)
        walk = _Walk(self)
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
            return Classification("needs_approval", "budget:exceeded", reason, text)
        except RecursionError:
            reason = "quoting or substitutions nested too deeply to check"
            return Classification("needs_approval", "parse:too-deep", reason, text)
        except Exception as exc:  # a bug here must never make a command safe
            reason = f"the classifier failed ({type(exc).__name__}: {exc})"
            return Classification("needs_approval", "error:classifier", reason, text)
        for glob in self.deny:
            if fnmatchcase(normalized, glob):
                walk.note("forbidden", f"user:deny:{glob}", "matches a deny rule in your config")
        if walk.malformed:  # the flat form is not all that would run: show it as written
            normalized = text
        verdict, rule, reason = walk.result()
        read_only = verdict == "safe" and walk.kind == "read" and not walk.allowed_by
        read_only = read_only and not walk.unconfined
        return Classification(verdict, rule, reason, normalized, read_only)


_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
CHANGES_FILES = "allow:changes-files"
# Decoders: text that reaches a command's words or a wrapper through one was hidden on
# purpose (`cat $(echo fi9z... | base64 -d)`), so what it names cannot be seen.
_DECODER = re.compile(
    r"\b(?:base(?:64|32)|basenc)\b[^|;&]*\s(?:-\w*d|--decode|-D)\b|\bxxd\b[^|;&]*\s-\w*r"
    r"|\brev\b|\buudecode\b|\bopenssl\b[^|;&]*\s-d\b|\bgzip\s+-d|\bgunzip\b|\bzcat\b"
    r"|\btr\s+['\"]?(?:a-z|A-Z|a-zA-Z)['\"]?\s+['\"]?[n-zN-Z]"
)
PROTECTED_RULE = "floor:seam-home"
PROTECTED_REASON = "touches Seam's own files (approvals, config, personalities, transcripts)"
_HOME_VARS = re.compile(r"\$\{?(HOME|SEAM_HOME)\}?(?![\w])")
_PATH_PIECE = re.compile(r"[^\s'\"=:,;()<>|&]+")
_GLOB = re.compile(r"[*?\[]")
# Credentials in a home directory, and a process's environment (where API keys live).
_SECRET_READ = re.compile(
    r"(?:^|[\s=:'\"])(?:~|/root|/home/[^/\s]+)/(?:\.ssh(?:/|$|\s)|\.aws/|\.gnupg|\.netrc"
    r"|\.pgpass|\.git-credentials|\.docker/config\.json|\.kube/config|\.npmrc|\.pypirc"
    r"|\.cargo/credentials|\.azure/|\.password-store|\.local/share/keyrings|\.mozilla/"
    r"|\.config/(?:gh/|gcloud/|google-chrome/|chromium/|hub\b))"
    r"|/etc/shadow|(?:^|[\s/'\"=:])environ(?:$|[\s'\"])|/proc/[^\s]*/(?:mem|maps)\b"
    # Secret files wherever they are, the project included (its `.env` holds API keys).
    r"|(?:^|[\s/'\"=:])(?:\.env(?:\.(?!example|sample|template|dist)[\w.-]+)?|id_(?:rsa|ed25519"
    r"|ecdsa|dsa)|[\w.-]+\.key|credentials(?:\.json)?|\.netrc|\.pgpass)(?=$|[\s'\"])"
)
# Programs that go through whole trees, and the options that make them (empty: always).
_RECURSIVE: dict[str, frozenset[str]] = {
    "find": frozenset(), "rg": frozenset(), "ag": frozenset(), "fd": frozenset(),
    "tar": frozenset(), "rsync": frozenset(), "du": frozenset(), "tree": frozenset(),
    "mv": frozenset(), "grep": frozenset({"-r", "-R", "--recursive"}),
    "cp": frozenset({"-r", "-R", "-a", "--recursive", "--archive"}),
    "zip": frozenset({"-r"}), "chmod": frozenset({"-R"}), "chown": frozenset({"-R"}),
    "rm": frozenset({"-r", "-R", "--recursive"}), "ls": frozenset({"-R"}),
}  # fmt: skip


_LOGIN_KEY = frozenset({"-i", "--identity", "-F", "--key", "--cert", "--cacert", "--kubeconfig"})


def _not_logins(cmd: Cmd) -> list[str]:
    """The arguments, less the key files a program logs in with (`ssh -i ~/.ssh/deploy`)."""
    args = cmd.args
    return [a for i, a in enumerate(args) if not (i and args[i - 1] in _LOGIN_KEY)]


def _cluster_has(arg: str, options: frozenset[str]) -> bool:
    if not arg.startswith("-") or arg.startswith("--"):
        return False
    return any(len(o) == 2 and o[1] in arg[1:] for o in options)


def _expand_home(word: str, seam_home: str, variables: dict[str, str]) -> str:
    """`$HOME` as `~` and `$SEAM_HOME` as Seam's home, wherever in the word they are."""

    def var(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return variables[name]
        if name == "HOME":
            return "~"
        return seam_home or match.group(0)

    return _HOME_VARS.sub(var, word) if "$" in word else word


def _mentions(text: str, spelling: str) -> bool:
    """Whether `spelling` appears in `text` as a whole path (not `/x/.seam2`)."""
    start = text.find(spelling)
    while start >= 0:
        end = start + len(spelling)
        if end == len(text) or text[end] in "/\"' \t\n;)|&:,":
            return True
        start = text.find(spelling, start + 1)
    return False


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/") or root == "/"


def _glob_reaches(pattern: str, path: str) -> bool:
    """Whether the glob `pattern` could match `path` or something inside it."""
    parts, wanted = pattern.strip("/").split("/"), path.strip("/").split("/")
    if pattern[:1] != path[:1]:
        return False
    if len(parts) < len(wanted):
        return False
    return all(_component_matches(w, p) for w, p in zip(wanted, parts, strict=False))


def _component_matches(name: str, pattern: str) -> bool:
    """One path component against one glob component, as the shell matches them: a leading
    dot is matched only by a literal dot (`*` lists `~`, it never reaches `~/.seam`)."""
    if name.startswith(".") and not pattern.startswith("."):
        return False
    return fnmatchcase(name, pattern)


def _index(rules: tuple[Rule, ...]) -> tuple[dict[str, tuple[Rule, ...]], tuple[Rule, ...]]:
    """Rules by program name (plus the rules for every program), keeping their order."""
    generic = tuple(r for r in rules if r.programs is None)
    names = {name for r in rules if r.programs is not None for name in r.programs}
    by_name = {
        name: tuple(r for r in rules if r.programs is None or name in r.programs) for name in names
    }
    return by_name, generic


class _Walk:
    """One classification: the most severe finding so far and what the script set up."""

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
        "unconfined",
        "variables",
        "written",
    )

    def __init__(self, classifier: CommandClassifier) -> None:
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

    def script(self, text: str, *, depth: int, bulk: bool) -> str:
        """Check every command of a script; returns the script as the classifier read it."""
        self.spend()
        if depth > MAX_DEPTH:
            self.note("needs_approval", "parse:too-deep", "commands nested too deeply to check")
            return text
        for rule in TEXT_FLOOR:
            if rule.pattern.search(text):
                self.note("forbidden", rule.name, rule.reason)
        parsed = parse(text, deadline=self.deadline)
        if parsed.evaluates:
            self.note("needs_approval", "allow:evaluates", parsed.evaluates)
        if depth == 0 and parsed.compound:
            self.malformed = True  # shown as written: the flat form would lose the loop
        if parsed.problem:
            self.malformed = self.malformed or depth == 0
            self.note(
                "needs_approval", "parse:malformed", f"cannot be read safely: {parsed.problem}"
            )
        # A nested script (sh -c, $(...)) sees the outer variables; its own do not leak out.
        saved = (self.cwd, dict(self.variables)) if depth else None
        out: list[str] = []
        last = len(parsed.pipelines) - 1
        for i, pipeline in enumerate(parsed.pipelines):
            if len(pipeline.stages) > MAX_STAGES:
                reason = f"a pipeline of {len(pipeline.stages)} commands is too long to check"
                self.note("needs_approval", "parse:too-long", reason)
                out.append(" | ".join(s.shown for s in pipeline.stages))
                continue
            upstream: list[Cmd | None] = []
            stages: list[str] = []
            bodies: list[str] = []
            for simple in pipeline.stages:
                rendered, innermost = self.simple(
                    simple, tuple(upstream), depth=depth, bulk=bulk, stdin=simple.redirects
                )
                stages.append(rendered)
                upstream.append(innermost)
                # Here-document bodies follow their line, as in the shell; they are part
                # of what runs, so part of what an approval covers.
                bodies.extend(
                    f"\n{r.body}\n{r.target}" for r in simple.redirects if r.op in _HEREDOCS
                )
            out.append(" | ".join(stages))
            out.extend(bodies)
            if i < last:
                joiner = _JOINERS.get(pipeline.separator, "; ")
                out.append("\n" if bodies and joiner == "; " else joiner)
            elif pipeline.separator == "&":
                out.append(" &")
            if pipeline.separator == "&" and not self.unconfined:
                self.unconfined = "&"  # it outlives the call: not for an unisolated run
        self.substitutions(parsed.substitutions, depth=depth, bulk=bulk)
        if saved is not None:
            self.cwd, self.variables = saved
        return "".join(out)

    def substitutions(self, bodies: tuple[str, ...], *, depth: int, bulk: bool) -> None:
        """Each distinct `$(...)`, backtick or `<(...)` body, judged once; one that decodes
        hidden text (`$(echo fi9z.. | base64 -d)`) asks, whatever it decodes to."""
        for body in dict.fromkeys(bodies):
            if _DECODER.search(body):
                reason = "a word is decoded from a hidden form at run time"
                self.note("needs_approval", "allow:encoded", reason)
            self.script(body, depth=depth + 1, bulk=bulk)

    def simple(
        self,
        simple: Simple,
        upstream: tuple[Cmd | None, ...],
        *,
        depth: int,
        bulk: bool,
        stdin: tuple[Redirect, ...],
    ) -> tuple[str, Cmd | None]:
        """Check one simple command and what it runs; returns its text and its innermost
        command (`curl` for `sudo curl`), which is what a later pipeline stage reads."""
        if depth > MAX_DEPTH:
            self.note("needs_approval", "parse:too-deep", "commands nested too deeply to check")
            return "", None
        self.spend()
        self.risky_assignments(simple.assignments)
        expanded = tuple(self.expand(w) for w in simple.words)
        words = self.split(simple.words, expanded)
        shown = simple.shown or render(words)
        # User globs see the command as written and, when variables or `$(echo ..)` were
        # resolved, as it would run: `x=git; $x push` is still a push.
        resolved = render(expanded) if expanded != simple.words else shown
        feeding = tuple(u for u in upstream if u is not None)
        if not words:  # `X=1` or a bare `> file`: record, and check what it writes
            for assignment in simple.assignments:
                self.assign(self.expand(assignment))
            self.check(self.cmd("", (), simple.redirects, feeding, bulk), shown, shown)
            return shown, None
        cmd = self.cmd(words[0], words[1:], simple.redirects, feeding, bulk)
        self.track(cmd)
        # What a wrapper runs is checked before the wrapper, so `sudo rm -rf x` reports
        # the deletion rather than the sudo (the first finding of a severity is kept).
        inner = unwrap(cmd.name, cmd.args)
        innermost: Cmd | None = cmd
        if inner is None or not inner.commands:
            if stdin or feeding:
                self.stdin_scripts(cmd, upstream, stdin, depth=depth, bulk=bulk)
            if self.written:
                self.written_script(cmd, depth=depth, bulk=bulk)
        else:
            for command in inner.commands:
                if command:
                    innermost = self.simple(
                        Simple(command),
                        upstream,
                        depth=depth + 1,
                        bulk=bulk or inner.bulk,
                        stdin=stdin,
                    )[1]
        if inner is not None:
            for script in inner.scripts:
                self.script(script, depth=depth + 1, bulk=bulk or inner.bulk)
        if words != expanded and expanded:
            # Quoting is not known after expansion, so a word was split to be strict; read
            # unsplit too: `sh -c "$(echo rm -rf /)"` runs the whole text as a script.
            whole = unwrap(program_name(expanded[0]), expanded[1:])
            if whole is not None:
                for script in whole.scripts:
                    self.script(script, depth=depth + 1, bulk=bulk or whole.bulk)
        self.check(cmd, shown, resolved, self.dynamic(simple))
        return shown, innermost or cmd

    def risky_assignments(self, assignments: tuple[str, ...]) -> None:
        for assignment in assignments:
            if risky_assignment(assignment):
                name = assignment.partition("=")[0]
                reason = f"sets {name}, a variable that makes programs run other code"
                self.note("needs_approval", "allow:risky-variable", reason)

    def dynamic(self, simple: Simple) -> frozenset[str] | None:
        """The words of `simple` the shell will still expand at run time (what `expand`
        could not resolve); None when the parser did not say which words expand."""
        if simple.expanding is None:
            return None
        expanded = (self.expand(w) for w in simple.expanding)
        return frozenset(w for w in expanded if "$" in w or "`" in w)

    def cmd(
        self,
        argv0: str,
        args: tuple[str, ...],
        redirects: tuple[Redirect, ...],
        upstream: tuple[Cmd, ...],
        bulk: bool,
    ) -> Cmd:
        downloaded = frozenset(self.downloads) if self.downloads else frozenset()
        name = program_name(argv0) if argv0 else ""
        home = self.classifier.home
        return Cmd(name, args, redirects, upstream, bulk, self.cwd, home, argv0, downloaded)

    def stdin_scripts(
        self,
        cmd: Cmd,
        upstream: tuple[Cmd | None, ...],
        stdin: tuple[Redirect, ...],
        *,
        depth: int,
        bulk: bool,
    ) -> None:
        """A shell reading its program from stdin runs here-documents and echoed text (other
        languages' programs on stdin are not shell: the allowlist asks for those)."""
        if cmd.name not in SHELLS and cmd.name not in (".", "source"):
            return
        if not reads_program_from_stdin(cmd.name, cmd.args):
            return
        for redirect in stdin:
            if redirect.op in ("<<", "<<-"):
                self.script(redirect.body, depth=depth + 1, bulk=bulk)
            elif redirect.op == "<<<":
                self.script(redirect.target, depth=depth + 1, bulk=bulk)
        for text in _piped_texts(upstream):
            self.script(text, depth=depth + 1, bulk=bulk)

    def written_script(self, cmd: Cmd, *, depth: int, bulk: bool) -> None:
        """`echo 'rm -rf /' > x.sh; sh x.sh`: a script written earlier is run now."""
        path = script_operand(cmd.name, cmd.args)
        if path is None and "/" in cmd.argv0:
            path = cmd.argv0
        text = None if path is None else self.written.get(cmd.path(path))
        if text is not None:
            self.script(text, depth=depth + 1, bulk=bulk)

    def check(
        self, cmd: Cmd, shown: str, resolved: str, dynamic: frozenset[str] | None = None
    ) -> None:
        """`dynamic`: the words the shell will expand at run time (None: unknown)."""
        if self.finding is not None and self.finding[0] == "forbidden":
            return  # nothing can make it worse
        classifier = self.classifier
        for rule in classifier.floor_for(cmd.name):
            if rule.test(cmd):
                self.note("forbidden", rule.name, rule.reason)
                return
        if classifier.protected:
            reached = self.protected(cmd)
            if reached == "named":
                self.note("forbidden", PROTECTED_RULE, PROTECTED_REASON)
                return
            if reached == "ancestor":
                reason = "goes through a directory that holds Seam's own files"
                self.note("needs_approval", "protected:ancestor", reason)
        for glob in classifier.deny:
            if fnmatchcase(shown, glob) or fnmatchcase(resolved, glob):
                self.note("forbidden", f"user:deny:{glob}", "matches a deny rule in your config")
                return
        for glob in classifier.allow:
            if fnmatchcase(resolved, glob):
                self.allowed_by = self.allowed_by or glob
                return
        for rule in classifier.patterns_for(cmd.name):
            if rule.test(cmd):
                self.note("needs_approval", rule.name, rule.reason)
                return
        self.judge(cmd, dynamic)

    def judge(self, cmd: Cmd, dynamic: frozenset[str] | None = None) -> None:
        """The allowlist's judgement of one command, turned into the walk's findings: a
        doubt, a write or an evaluating builtin asks; a proof is recorded (and whether
        what it reads stays inside the working directory)."""
        name = cmd.argv0 or cmd.name or "redirection"
        if prints_variables(cmd):
            reason = f"{name}: prints every variable of the shell, API keys among them"
            self.note("needs_approval", "allow:prints-environment", reason)
            return
        evaluating = evaluates(cmd)
        if evaluating is not None:
            self.note("needs_approval", "allow:evaluates", f"{name}: {evaluating}")
            return
        judged = prove(cmd)
        if isinstance(judged, Doubt):
            self.note("needs_approval", judged.rule, f"{name}: {judged.reason}")
            return
        written = [p for p in cmd.writes if p not in _DEVICES]
        if judged == "write" or written:
            what = "changes files" if judged == "write" else f"writes {written[0]}"
            self.note("needs_approval", CHANGES_FILES, f"{name}: {what}")
            return
        if cmd.bulk and any(_DECODER.search(render((u.name, *u.args))) for u in cmd.upstream):
            reason = f"{name}: runs on text decoded from a hidden form"
            self.note("needs_approval", "allow:encoded", reason)
            return
        if cmd.bulk and (judged != "read" or cmd.name not in ANY_ARGUMENTS):
            reason = f"{name}: runs once per input item, with arguments nobody has seen"
            self.note("needs_approval", "allow:unseen-arguments", reason)
            return
        if judged == "run" and any(a.startswith(("<(", ">(")) for a in cmd.args):
            reason = f"{name}: runs what another command prints"
            self.note("needs_approval", "allow:runs-output", reason)
            return
        if _SECRET_READ.search(" ".join((*_not_logins(cmd), *(r.target for r in cmd.redirects)))):
            reason = "reads credentials (ssh keys, .env, cloud or password files)"
            self.note("needs_approval", "pattern:secret-read", reason)
            return
        if not self.unconfined:
            if cmd.bulk or prints_environment(cmd):
                self.unconfined = cmd.name
            else:
                self.unconfined = outside(cmd, self.root, dynamic, self.classifier.resolve)
        self.proofs.setdefault(cmd.name or name, judged)
        self.kind = widest(self.kind, judged)

    def protected(self, cmd: Cmd) -> str:
        """ "named" when a word of `cmd` names a protected path (or a glob matching one),
        "ancestor" when a recursive command starts above one, else ""."""
        words = [cmd.argv0, *cmd.args, *(r.target for r in cmd.redirects)]
        if cmd.name not in ("cat", "tee"):  # for those a here-document is data, not code
            words += [r.body for r in cmd.redirects if r.body]
        recursive = _RECURSIVE.get(cmd.name)
        reaches = recursive is not None and (
            not recursive or any(a in recursive or _cluster_has(a, recursive) for a in cmd.args)
        )
        found = ""
        for word in words:
            hit = self.names_protected(word, ancestor=reaches)
            if hit == "named":
                return hit
            found = found or hit
        return found

    def names_protected(self, word: str, *, ancestor: bool) -> str:
        if not word:
            return ""
        classifier = self.classifier
        seam_home = classifier.protected[0] if classifier.protected else ""
        text = _expand_home(word, seam_home, self.variables)
        if any(_mentions(text, s) for spellings in classifier.spellings for s in spellings):
            return "named"
        found = ""
        for piece in _PATH_PIECE.findall(text):
            canonical = canonical_path(piece, home=classifier.home, cwd=self.cwd)
            relative = not canonical.startswith(("/", "~"))
            globbed = _GLOB.search(canonical) is not None
            for path, spellings in zip(classifier.protected, classifier.spellings, strict=True):
                for spelling in spellings:
                    if _inside(canonical, spelling):
                        return "named"
                    if globbed and _glob_reaches(canonical, spelling):
                        return "named"
                    if ancestor and not relative and _inside(spelling, canonical):
                        found = "ancestor"
                # Where a relative path starts is unknown: its name is enough.
                if relative and self.cwd is None and posixpath.basename(path) in canonical:
                    return "named"
        return found

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
        elif (text := _printed(cmd)) is not None:
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
            word = _SUBSTITUTION.sub(lambda m: _fold_echo(m, deadline), word)
        return word


def _fold_echo(match: re.Match[str], deadline: Clock) -> str:
    inner = match.group(1) if match.group(1) is not None else match.group(2)
    parsed = parse(inner, deadline=deadline)
    if parsed.problem or parsed.substitutions or len(parsed.pipelines) != 1:
        return match.group(0)
    stages = parsed.pipelines[0].stages
    if len(stages) != 1 or not stages[0].words:
        return match.group(0)
    words = stages[0].words
    output = _echo_output(program_name(words[0]), words[1:])
    return match.group(0) if output is None else output.rstrip("\n")


def _echo_output(name: str, args: tuple[str, ...]) -> str | None:
    """What `echo` or `printf` prints (bash semantics), or None when it cannot be known."""
    if name == "echo":
        escapes = False
        start = 0
        while start < len(args) and _ECHO_FLAGS.fullmatch(args[start]):
            escapes = escapes or "e" in args[start]
            start += 1
        text = " ".join(args[start:])
        return decode_c_escapes(text) if escapes else text
    if name != "printf" or not args:
        return None
    fmt, values = (args[1], args[2:]) if args[0] == "--" and len(args) > 1 else (args[0], args[1:])
    if _PRINTF_UNSUPPORTED.search(fmt):
        return None
    out: list[str] = []
    given = iter(values)
    for piece in re.split(r"(%[sb%])", fmt):
        if piece == "%s":
            out.append(next(given, ""))
        elif piece == "%b":
            out.append(decode_c_escapes(next(given, "")))
        elif piece == "%%":
            out.append("%")
        else:
            out.append(decode_c_escapes(piece))
    return "".join(out)


def _piped_texts(upstream: tuple[Cmd | None, ...]) -> list[str]:
    """The program text a shell would read from `echo ... [| base64 -d] |` or from
    `cat <<EOF |`, when knowable.

    Echoed text is checked both as printed and with its escapes decoded: `sh` and `bash`
    disagree on whether `echo` decodes them, and the stricter reading must win."""
    if not upstream or upstream[-1] is None:
        return []
    last = upstream[-1]
    text = _printed(last)
    if text is None and len(upstream) >= 2 and upstream[-2] is not None:
        source = _printed(upstream[-2])
        text = None if source is None else _decode(last, source)
    if text is None:
        return []
    decoded = decode_c_escapes(text)
    return [text] if decoded == text else [text, decoded]


def _printed(cmd: Cmd) -> str | None:
    if cmd.name == "cat" and not cmd.args:
        for redirect in cmd.redirects:
            if redirect.op in _HEREDOCS:
                return redirect.body
            if redirect.op == "<<<":
                return redirect.target
        return None
    return _echo_output(cmd.name, cmd.args)


def _decode(decoder: Cmd, text: str) -> str | None:
    try:
        if decoder.name == "base64" and ("-d" in decoder.args or "--decode" in decoder.args):
            return base64.b64decode(text.strip() + "==", validate=False).decode()
        if decoder.name == "xxd" and "-r" in decoder.args:
            return bytes.fromhex("".join(text.split())).decode()
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None
    return None

"""`Walk`: one classification going through a parsed script, command by command: each
pipeline stage, each substitution, each command a wrapper runs, each script fed to a
shell, checked against the floor, the protected paths, the user's rules, the dangerous
patterns and the allowlist, in that order (see `classifier.py`)."""

from __future__ import annotations

import re
from dataclasses import replace
from fnmatch import fnmatchcase

from seam.plugins.guardrail.allowlist import ANY_ARGUMENTS, Doubt, prove, risky_assignment, widest
from seam.plugins.guardrail.command import Cmd
from seam.plugins.guardrail.confine import outside
from seam.plugins.guardrail.echo import HEREDOCS, piped_texts
from seam.plugins.guardrail.grammar import evaluates, prints_environment, prints_variables
from seam.plugins.guardrail.normalize import (
    SHELLS,
    program_name,
    reads_program_from_stdin,
    render,
    script_operand,
    unwrap,
)
from seam.plugins.guardrail.protect import PROTECTED_REASON, PROTECTED_RULE, protected
from seam.plugins.guardrail.rules import TEXT_FLOOR
from seam.plugins.guardrail.scope import CHANGES_FILES, Scope
from seam.plugins.guardrail.shell import Pipeline, Redirect, Script, Simple, parse
from seam.plugins.guardrail.skill_runs import skill_folder

MAX_DEPTH = 8  # wrappers and substitutions nested deeper than this need approval
MAX_STAGES = 64  # a longer pipeline needs approval (each stage sees the ones before it)

# The earlier stages of a pipeline (None where a stage ran nothing that can be named), and
# the redirections a command reads its input from.
Upstream = tuple[Cmd | None, ...]
Stdin = tuple[Redirect, ...]
_JOINERS = {"&&": " && ", "||": " || ", "&": " & "}
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
# Decoders: text that reaches a command's words or a wrapper through one was hidden on
# purpose (`cat $(echo fi9z... | base64 -d)`), so what it names cannot be seen.
_DECODER = re.compile(
    r"\b(?:base(?:64|32)|basenc)\b[^|;&]*\s(?:-\w*d|--decode|-D)\b|\bxxd\b[^|;&]*\s-\w*r"
    r"|\brev\b|\buudecode\b|\bopenssl\b[^|;&]*\s-d\b|\bgzip\s+-d|\bgunzip\b|\bzcat\b"
    r"|\btr\s+['\"]?(?:a-z|A-Z|a-zA-Z)['\"]?\s+['\"]?[n-zN-Z]"
)
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


_LOGIN_KEY = frozenset({"-i", "--identity", "-F", "--key", "--cert", "--cacert", "--kubeconfig"})


def _not_logins(cmd: Cmd) -> list[str]:
    """The arguments, less the key files a program logs in with (`ssh -i ~/.ssh/deploy`)."""
    args = cmd.args
    return [a for i, a in enumerate(args) if not (i and args[i - 1] in _LOGIN_KEY)]


class Walk(Scope):
    """One classification: `script` checks a whole command line and returns it as read."""

    __slots__ = ()

    def script(self, text: str, *, depth: int, bulk: bool) -> str:
        """Check every command of a script; returns the script as the classifier read it."""
        self.spend()
        if depth > MAX_DEPTH:
            self.note("needs_approval", "parse:too-deep", "commands nested too deeply to check")
            return text
        parsed = self.parsed(text, depth=depth)
        # A nested script (sh -c, $(...)) sees the outer variables; its own do not leak out.
        saved = (self.cwd, dict(self.variables)) if depth else None
        out: list[str] = []
        last = len(parsed.pipelines) - 1
        for i, pipeline in enumerate(parsed.pipelines):
            rendered, bodies = self.pipeline(pipeline, depth=depth, bulk=bulk)
            out.append(rendered)
            if bodies is None:
                continue
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

    def parsed(self, text: str, *, depth: int) -> Script:
        """`text` parsed, with what its text alone shows noted: the fork bomb of the floor,
        evaluating builtins, syntax that cannot be read."""
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
        return parsed

    def pipeline(
        self, pipeline: Pipeline, *, depth: int, bulk: bool
    ) -> tuple[str, list[str] | None]:
        """Check each stage (each sees the ones before it); returns the pipeline's text and
        its here-document bodies, None when it was too long to check."""
        if len(pipeline.stages) > MAX_STAGES:
            reason = f"a pipeline of {len(pipeline.stages)} commands is too long to check"
            self.note("needs_approval", "parse:too-long", reason)
            return " | ".join(s.shown for s in pipeline.stages), None
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
            bodies.extend(f"\n{r.body}\n{r.target}" for r in simple.redirects if r.op in HEREDOCS)
        return " | ".join(stages), bodies

    def substitutions(self, bodies: tuple[str, ...], *, depth: int, bulk: bool) -> None:
        """Each distinct `$(...)`, backtick or `<(...)` body, judged once; one that decodes
        hidden text (`$(echo fi9z.. | base64 -d)`) asks, whatever it decodes to."""
        for body in dict.fromkeys(bodies):
            if _DECODER.search(body):
                reason = "a word is decoded from a hidden form at run time"
                self.note("needs_approval", "allow:encoded", reason)
            self.script(body, depth=depth + 1, bulk=bulk)

    def simple(
        self, simple: Simple, upstream: Upstream, *, depth: int, bulk: bool, stdin: Stdin
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
        innermost = self.runs(cmd, upstream, stdin, depth=depth, bulk=bulk)
        if words != expanded and expanded:
            self.unsplit(expanded, depth=depth, bulk=bulk)
        self.check(cmd, shown, resolved, self.dynamic(simple))
        return shown, innermost or cmd

    def runs(
        self, cmd: Cmd, upstream: Upstream, stdin: Stdin, *, depth: int, bulk: bool
    ) -> Cmd | None:
        """Check what `cmd` runs besides itself: a wrapper's command or script, a script it
        reads from its input or one written earlier. What a wrapper runs is checked before
        the wrapper, so `sudo rm -rf x` reports the deletion rather than the sudo (the first
        finding of a severity is kept). Returns the innermost command."""
        inner = unwrap(cmd.name, cmd.args)
        innermost: Cmd | None = cmd
        if inner is None or not inner.commands:
            if stdin or cmd.upstream:
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
        return innermost

    def unsplit(self, expanded: tuple[str, ...], *, depth: int, bulk: bool) -> None:
        """Quoting is not known after expansion, so a word was split to be strict; read
        unsplit too: `sh -c "$(echo rm -rf /)"` runs the whole text as a script."""
        whole = unwrap(program_name(expanded[0]), expanded[1:])
        if whole is not None:
            for script in whole.scripts:
                self.script(script, depth=depth + 1, bulk=bulk or whole.bulk)

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
        self, cmd: Cmd, upstream: Upstream, stdin: Stdin, *, depth: int, bulk: bool
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
        for text in piped_texts(upstream):
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
        if self.floored(cmd) or self.ruled(shown, resolved):
            return
        for rule in self.classifier.patterns_for(cmd.name):
            if rule.test(cmd):
                self.note("needs_approval", rule.name, rule.reason)
                return
        self.judge(cmd, dynamic)

    def floored(self, cmd: Cmd) -> bool:
        """Whether the floor or a protected path forbids `cmd` (a recursive command that
        goes through a directory above a protected one is only noted)."""
        classifier = self.classifier
        for rule in classifier.floor_for(cmd.name):
            if rule.test(cmd):
                self.note("forbidden", rule.name, rule.reason)
                return True
        checked = self.skill_run(cmd)
        if not classifier.protected:
            return False
        reached = protected(classifier, checked, self.cwd, self.variables)
        if reached == "named":
            self.note("forbidden", PROTECTED_RULE, PROTECTED_REASON)
            return True
        if reached == "ancestor":
            reason = "goes through a directory that holds Seam's own files"
            self.note("needs_approval", "protected:ancestor", reason)
        return False

    def skill_run(self, cmd: Cmd) -> Cmd:
        """Note the skill folder `cmd` runs a file from; returns `cmd` as the protected
        paths see it: a script in a skill folder under `$SEAM_HOME` is judged with the
        skill's trust once the walk is done (forbidden unless trusted), not here."""
        places = self.classifier.skills
        found = None if places is None else skill_folder(places, cmd, self.root)
        if found is None:
            return cmd
        word, folder = found
        bare = replace(
            cmd,
            args=tuple("" if a == word else a for a in cmd.args),
            argv0="" if cmd.argv0 == word else cmd.argv0,
        )
        alone = replace(cmd, args=(word,), argv0="", redirects=())
        inside = protected(self.classifier, alone, None, self.variables)
        self.skill_runs[folder] = self.skill_runs.get(folder, False) or bool(inside)
        return bare

    def ruled(self, shown: str, resolved: str) -> bool:
        """Whether one of the user's globs decided: a deny forbids, an allow lets this one
        command through (not the floor, not the commands chained to it)."""
        classifier = self.classifier
        for glob in classifier.deny:
            if fnmatchcase(shown, glob) or fnmatchcase(resolved, glob):
                self.note("forbidden", f"user:deny:{glob}", "matches a deny rule in your config")
                return True
        for glob in classifier.allow:
            if fnmatchcase(resolved, glob):
                self.allowed_by = self.allowed_by or glob
                return True
        return False

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

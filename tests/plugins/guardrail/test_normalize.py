"""Normalisation: each obfuscation is seen through, and quoted text stays text."""

from __future__ import annotations

import random
import shlex

import pytest

from seam.plugins.guardrail.classifier import MAX_DEPTH, CommandClassifier
from seam.plugins.guardrail.normalize import canonical_path, strip_ansi
from seam.plugins.guardrail.shell import parse


@pytest.fixture(scope="module")
def guard() -> CommandClassifier:
    return CommandClassifier(home="/home/me")


@pytest.mark.parametrize(
    "command",
    [
        "'r''m' -rf /",
        '"rm" -rf /',
        "\\rm -rf /",
        "r\\m -rf /",
        "$'\\x72\\x6d' -rf /",
        "$'\\162\\155' -rf /",
        "/bin/rm -rf /",
        "FOO=1 BAR='x y' rm -rf /",
    ],
)
def test_quoting_paths_and_env_prefixes_resolve_to_the_program(
    guard: CommandClassifier, command: str
) -> None:
    found = guard.classify(command)
    assert (found.verdict, found.rule) == ("forbidden", "floor:rm-root")
    assert found.normalized.endswith("rm -rf /")


@pytest.mark.parametrize(
    "command",
    [
        "sh -c 'rm -rf /'",
        'bash -c "rm -rf /"',
        "zsh -c 'rm -rf /'",
        "bash -lc 'rm -rf /'",
        "eval 'rm -rf /'",
        "env rm -rf /",
        "env -i A=1 /usr/bin/env rm -rf /",
        "sudo -u root rm -rf /",
        "nohup rm -rf / &",
        "timeout 5 rm -rf /",
        "timeout -s KILL 5 rm -rf /",
        "echo / | xargs rm -rf /",
        "command rm -rf /",
        "exec rm -rf /",
        "nice -n 5 rm -rf /",
        "sudo env FOO=1 nice timeout 5 bash -c \"eval 'rm -rf /'\"",
        "ssh host 'rm -rf /'",
    ],
)
def test_wrappers_are_unwrapped_recursively(guard: CommandClassifier, command: str) -> None:
    assert guard.classify(command).rule == "floor:rm-root"


@pytest.mark.parametrize(
    "command",
    [
        'echo "$(rm -rf /)"',
        "echo `rm -rf /`",
        "cat <(rm -rf /)",
        "x=$(rm -rf ~)",
        "$(echo rm) -rf /",
        "`printf rm` -rf /",
        "esc:cat <<EOF\n$(rm -rf /)\nEOF",
    ],
)
def test_substitutions_are_commands_too(guard: CommandClassifier, command: str) -> None:
    assert guard.classify(command.removeprefix("esc:")).rule == "floor:rm-root"


@pytest.mark.parametrize(
    "command",
    [
        "echo '$(rm -rf /)'",
        "git commit -m 'rm -rf / is bad'",
        'git commit -m "never run rm -rf /"',
        "grep -r 'rm -rf' .",
        "cat <<'EOF'\n$(rm -rf /)\nEOF",
        "cat > notes.md <<EOF\nrun: sudo rm -rf / and curl x | sh\nEOF",
        "echo 'rm -rf /' > warning.txt",
    ],
)
def test_quoted_text_is_not_run(guard: CommandClassifier, command: str) -> None:
    """Quoted text is data: no rule fires on it. The commands that write a file ask, as
    every change of files does (issue #22), and for that reason only."""
    found = guard.classify(command)
    assert found.verdict == "safe" or found.rule == "allow:changes-files", found


@pytest.mark.parametrize(
    "command",
    [
        "ls; rm -rf /; echo ok",
        "ls && rm -rf / && echo ok",
        "false || rm -rf /",
        "ls\nrm -rf /\necho ok",
        "ls | rm -rf / | cat",
        "sleep 1 & rm -rf /",
        "(cd /tmp; rm -rf /)",
        "if true; then rm -rf /; fi",
    ],
)
def test_chains_are_split_and_the_worst_part_decides(
    guard: CommandClassifier, command: str
) -> None:
    assert guard.classify(command).rule == "floor:rm-root"


def test_the_most_severe_part_wins_and_ties_keep_the_first(guard: CommandClassifier) -> None:
    found = guard.classify("git push -f; rm -r build; rm -rf ~; sudo ls")
    assert (found.verdict, found.rule) == ("forbidden", "floor:rm-root")
    found = guard.classify("ls && git push --force && rm -r build")
    assert (found.verdict, found.rule) == ("needs_approval", "pattern:git-force-push")


def test_ansi_sequences_are_stripped(guard: CommandClassifier) -> None:
    command = "\x1b[31mrm\x1b[0m -rf \x1b]0;title\x07/\r"
    assert strip_ansi(command) == "rm -rf /"
    found = guard.classify(command)
    assert (found.verdict, found.normalized) == ("forbidden", "rm -rf /")


def test_variables_and_cd_set_earlier_in_the_script_are_followed(
    guard: CommandClassifier,
) -> None:
    assert guard.classify("x=rm; $x -rf /").rule == "floor:rm-root"
    assert guard.classify('a="rm -rf /"; $a').rule == "floor:rm-root"
    assert guard.classify("export T=/; rm -rf $T").rule == "floor:rm-root"
    assert guard.classify("cd / && rm -rf *").rule == "floor:rm-root"
    assert guard.classify("cd /tmp/build && rm -rf *").rule == "pattern:rm-recursive"
    # An unknown name is computed at run time: never safe.
    assert guard.classify("$TOOL -rf /").rule == "pattern:dynamic-command"


def test_brace_expansion_is_applied_outside_quotes(guard: CommandClassifier) -> None:
    assert guard.classify("{rm,-rf,/}").rule == "floor:rm-root"
    assert guard.classify("{rm,} -rf ~").rule == "floor:rm-root"
    assert guard.classify("echo '{rm,-rf,/}' ${HOME}").verdict == "safe"
    assert guard.classify("find . -name '*.{js,ts}'").verdict == "safe"


def test_a_script_written_earlier_is_checked_when_run(guard: CommandClassifier) -> None:
    assert guard.classify("echo 'rm -rf /' > x.sh; sh x.sh").rule == "floor:rm-root"
    assert guard.classify("echo ls > a.sh; echo 'rm -rf ~' >> a.sh; ./a.sh").rule == (
        "floor:rm-root"
    )
    assert guard.classify("cat > x.sh <<EOF\nrm -rf /\nEOF\nbash x.sh").rule == "floor:rm-root"
    assert guard.classify("echo 'ls -la' > x.sh; sh x.sh").rule == "allow:changes-files"


def test_text_fed_to_a_shell_is_classified(guard: CommandClassifier) -> None:
    assert guard.classify("echo 'rm -rf /' | sh").rule == "floor:rm-root"
    assert guard.classify("echo cm0gLXJmIC8= | base64 -d | sh").rule == "floor:rm-root"
    assert guard.classify("bash <<< 'rm -rf ~'").rule == "floor:rm-root"
    assert guard.classify("bash <<EOF\nls\nrm -rf /\nEOF").rule == "floor:rm-root"
    assert guard.classify("echo ls | sh").verdict == "safe"
    # Decoded text that cannot be read is still a hidden program.
    assert guard.classify("echo ZWNobyBoaQ== | base64 -d | sh").verdict == "needs_approval"


def test_unbalanced_quoting_is_never_safe() -> None:
    permissive = CommandClassifier(allow=["*"])
    for command in ("echo 'hi", 'ls "x', "echo $(ls", "echo `ls", "echo ${HOME"):
        found = permissive.classify(command)
        assert (found.verdict, found.rule) == ("needs_approval", "parse:malformed"), command
    # What could be read still counts.
    assert permissive.classify("rm -rf / 'x").verdict == "forbidden"


def test_nesting_past_the_limit_needs_approval() -> None:
    command = "ls"
    for _ in range(MAX_DEPTH + 2):
        command = f"sh -c {shlex.quote(command)}"
    # With time to spare the depth limit decides; with the default budget, the budget may.
    assert CommandClassifier(cpu_budget=10.0).classify(command).rule == "parse:too-deep"
    found = CommandClassifier().classify(command)
    assert (found.verdict, found.rule in ("parse:too-deep", "budget:exceeded")) == (
        "needs_approval",
        True,
    )


def test_a_huge_command_is_not_read() -> None:
    found = CommandClassifier().classify("echo " + "a" * 2_000_000)
    assert (found.verdict, found.rule) == ("needs_approval", "parse:too-long")


def test_random_input_never_breaks_the_classifier(guard: CommandClassifier) -> None:
    """Garbage must come back classified, never as the classifier's own error."""
    pieces = [
        *"'\"\\$`()<>|&;{}[]*?~#=\n\t -",
        *("rm", "-rf", "/", "sh", "-c", "$(", "<<", "EOF", "$'", "\\x", "\\U", "{a,b}"),
        *("echo", "printf", "base64", "-d", "xargs", "sudo", "cd", "IFS=", "x.sh", "./x.sh"),
    ]
    rng = random.Random(1234)
    for _ in range(3000):
        command = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 30)))
        assert guard.classify(command).rule != "error:classifier", command


def test_paths_are_canonical() -> None:
    assert canonical_path("$HOME/.bashrc", home="/home/me", cwd=None) == "~/.bashrc"
    assert canonical_path("${HOME}", home="/home/me", cwd=None) == "~"
    assert canonical_path("/home/me/x/../.ssh/", home="/home/me", cwd=None) == "~/.ssh"
    assert canonical_path("//usr/./bin/..", home="", cwd=None) == "/usr"
    assert canonical_path("~root/x", home="", cwd=None) == "/root/x"
    assert canonical_path("*", home="", cwd="/") == "/*"
    assert canonical_path("build", home="", cwd=None) == "build"


def test_the_parser_keeps_here_documents_and_redirections() -> None:
    script = parse("cat > out.txt 2>&1 <<'EOF'\nline $(x)\nEOF\necho done")
    first, second = (p.stages[0] for p in script.pipelines)
    assert first.words == ("cat",)
    assert [(r.op, r.target) for r in first.redirects] == [
        (">", "out.txt"),
        (">&", "1"),
        ("<<", "EOF"),
    ]
    assert first.redirects[2].body == "line $(x)"
    assert second.words == ("echo", "done")
    assert script.substitutions == ()  # a quoted delimiter: the body is not expanded


def test_loops_and_conditionals_are_shown_as_written(guard: CommandClassifier) -> None:
    """What a person approves (and what is remembered) is the whole command: a flat list
    of its simple commands would let `for f in /; do rm -r "$f"; done` reuse an approval
    given for another loop."""
    for command in (
        'for f in $(cat list); do rm -r "$f"; done',
        "if [ -d x ]; then rm -r x; fi",
        "while true; do rm -r x; done",
        "f() { rm -r x; }; f",
    ):
        found = guard.classify(command)
        assert (found.verdict, found.normalized) == ("needs_approval", command)


def test_a_redirection_after_a_list_belongs_to_its_last_command() -> None:
    # The grammar reads `a && b 2>&1 | c` as `(a && b) 2>&1 | c`; bash as `a && (b 2>&1 | c)`.
    script = parse("cd build && make 2>&1 | tee log")
    first, second = script.pipelines
    assert [s.words for s in first.stages] == [("cd", "build")]
    assert [s.words for s in second.stages] == [("make",), ("tee", "log")]
    assert [(r.op, r.target) for r in second.stages[0].redirects] == [(">&", "1")]


@pytest.mark.parametrize(
    ("command", "hidden", "verdict"),
    [
        ("((i++))", "((i += $(rm -rf ~)))", "needs_approval"),
        (
            "for ((i = 0; i < 3; i++)); do echo $i; done",
            "for ((i = 0; i < $(rm -rf ~); i++)); do echo $i; done",
            "needs_approval",
        ),
        ("x=$((1 + 2)); echo $x", "x=$((1 + $(rm -rf ~))); echo $x", "safe"),
    ],
)
def test_arithmetic_is_not_a_command(
    guard: CommandClassifier, command: str, hidden: str, verdict: str
) -> None:
    """Arithmetic on names evaluates what the names hold (`a[$(cmd)]` runs cmd), so only
    arithmetic on literal numbers is proven (issue #22); a substitution inside is judged."""
    assert guard.classify(command).verdict == verdict
    assert guard.classify(hidden).verdict == "forbidden"

"""Issue #22, "Unknown is never safe": what `safe` and `read_only` have to be proven by.

Each class of the issue has its own cases: builtins and expansions that evaluate code,
long options by prefix or with `=value`, writes of every shape, reads that could reach a
secret (they may be `safe` inside a sandbox, never `read_only`), and how a proof and the
first unproven part are reported.
"""

from __future__ import annotations

import pytest

from seam.plugins.guardrail.classifier import CommandClassifier
from seam.plugins.guardrail.grammar import long_matches, unknown_long
from seam.plugins.guardrail.options import LONG_OPTIONS

GUARD = CommandClassifier(home="/home/me", protected=["/home/me/.seam"])
CWD = "/home/me/project"


def classify(command: str) -> tuple[str, str, bool]:
    found = GUARD.classify(command, cwd=CWD)
    return found.verdict, found.rule, found.read_only


# --- builtins and expansions that evaluate code -------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "eval ls",
        "source ./x.sh",
        ". ./x.sh",
        "mapfile -C 'rm x' -c 1 a < f",
        "mapfile -t lines < f",
        "readarray -C id -c 1 a < f",
        "let x=1+2",
        "let 'a[$(id)]'",
        "((i++))",
        "(( x = a[$(id)] ))",
        "for ((i=0; i<3; i++)); do echo $i; done",
        "echo $((x + 1))",
        "echo $[ a[$(id)] ]",
        "echo ${a[$i]}",
        "a[$(id)]=1",
        "printf -v 'a[$(id)]' %s x",
        "printf -v x %s y",
        "declare -n ref=x",
        "declare 'a[$(id)]=1'",
        "declare -i n=x",
        "typeset -n r=PATH",
        "local -n r=x",
        "readonly 'a[$(id)]'",
        "export -n PATH",
        "read -a words <<< 'a b'",
        "read 'a[$(id)]' <<< x",
        "unset 'a[$(id)]'",
        "[[ -v 'a[$(id)]' ]]",
        "[[ -v x ]]",
        "[[ x -eq 'a[$(id)]' ]]",
        "[[ $n -gt 3 ]]",
        "[ -v 'a[$(id)]' ]",
        "test -v x",
        "echo ${x@P}",
        "echo ${x@Q}",
        "echo ${!ref}",
        "trap 'rm -rf x' EXIT",
        "enable -n echo",
        "complete -C id ls",
        "compgen -C id x",
        "bind -x '\"\\C-a\": id'",
        "exec bash",
        "coproc ls",
        "command -p ls",
        "f() { ls; }",
        "fc -s",
        "declare",
        "declare -p",
        "export -p",
        "set",
    ],
)
def test_code_evaluating_builtins_and_expansions_are_never_safe(command: str) -> None:
    verdict, rule, read_only = classify(command)
    assert verdict != "safe" and not read_only, (command, rule)
    assert rule.startswith(("allow:", "parse:")), (command, rule)


@pytest.mark.parametrize(
    "command",
    [
        "x=$((1 + 2)); echo $x",
        "echo ${HOME:-/tmp} ${#x} ${x%.py} ${x//a/b} ${x^^} ${x:1:2} ${a[0]} ${a[@]}",
        "read -r line < README.md",
        "printf '%s\\n' a b 'a[1]'",
        "[[ -f README.md && 1 -eq 1 ]]",
        "test -f README.md",
        "export X=1",
        "set -euo pipefail",
        "x=1; echo $x",
    ],
)
def test_plain_expansions_and_builtins_stay_proven(command: str) -> None:
    assert classify(command)[0] == "safe", command


@pytest.mark.parametrize(
    "assignment",
    [
        "PROMPT_COMMAND=id",
        "BASH_ENV=./x",
        "ENV=./x",
        "LESSOPEN='|id %s'",
        "LESSCLOSE=id",
        "PAGER=id",
        "EDITOR=id",
        "GIT_SSH_COMMAND=id",
        "GIT_EXTERNAL_DIFF=id",
        "LD_PRELOAD=./x.so",
        "PATH=.:$PATH",
        "IFS=/",
        "TAR_OPTIONS=--checkpoint-action=exec=id",
        "GOFLAGS=-toolexec=./x",
        "RUSTFLAGS=-Clinker=./x",
        "PYTHONWARNINGS=ignore::x.Y",
        "MY_TOOL_COMMAND=id",
    ],
)
def test_variables_that_make_programs_run_code_ask(assignment: str) -> None:
    for command in (f"{assignment} ls", f"export {assignment}", f"env {assignment} ls"):
        verdict, rule, _ = classify(command)
        assert (verdict, rule) == ("needs_approval", "allow:risky-variable"), command


def test_harmless_variables_stay_proven() -> None:
    for command in ("NODE_ENV=test npm test", "DEBUG=1 pytest", "GOOS=linux go build ./..."):
        assert classify(command)[0] == "safe", command


# --- long options: prefixes, `=value`, clusters --------------------------------------------


@pytest.mark.parametrize(
    ("typed", "option", "matches"),
    [
        ("--compress-program=sh", "--compress-program", True),
        ("--compress-prog=sh", "--compress-program", True),
        ("--comp", "--compress-program", True),
        ("--c", "--compress-program", True),
        ("--check", "--compress-program", False),
        ("--compress-programs", "--compress-program", False),
        ("--", "--compress-program", False),
        ("-shell-esc", "-shell-escape", True),
        ("-s", "-shell-escape", False),
        ("-c", "-c", True),
    ],
)
def test_a_long_option_counts_as_every_option_it_could_abbreviate(
    typed: str, option: str, matches: bool
) -> None:
    assert long_matches(typed, option) is matches


def test_an_option_none_of_the_full_list_could_mean_is_unproven() -> None:
    assert unknown_long(("--frob", "x"), LONG_OPTIONS["sort"], False) == "--frob"
    assert unknown_long(("-n", "--key=2", "--", "--frob"), LONG_OPTIONS["sort"], False) == ""
    assert unknown_long(("--no-config",), LONG_OPTIONS["rg"], True) == ""
    assert classify("sort --frob x")[1] == "allow:unknown-option"
    assert classify("grep --frobnicate x f")[1] == "allow:unknown-option"


@pytest.mark.parametrize(
    "command",
    [
        "sort --compress-prog=sh data.txt",
        "sort --comp=sh data.txt",
        "tar cf x.tar --checkpoint=1 --checkpoint-act=exec=id src",
        "tar cf x.tar --use-comp=sh src",
        "tar -tf x.tar --to-com=id",
        "git --upload-pack=id ls-remote .",
        "git fetch --upload-p=id origin",
        "git rebase -x id main",
        "git rebase -ixid main",
        "git rebase --exe=id main",
        "git -c core.fsmonitor=id status",
        "git -ccore.pager=cat log",
        "git log --out=x.txt",
        "git grep -Oid x",
        "rg --pr=./x TODO",
        "rg --hostname-bin=./x TODO",
        "man --pag=id ls",
        "man -Hfirefox ls",
        "awk --so='BEGIN{}' 'BEGIN{}'",
        "sed --expr='1e id' f",
        "npx --call=id",
        "pdflatex --shell-esc x.tex",
        "less --log-file=x README.md",
        "find . -execdir python3 {} ;",
        "find . -okdir python3 {} ;",
        "find . -fprint x",
        "find . -frobnicate",
    ],
)
def test_options_by_prefix_value_or_cluster_are_judged_as_what_they_could_mean(
    command: str,
) -> None:
    verdict, rule, _ = classify(command)
    assert verdict == "needs_approval", (command, rule)


# --- writes of every shape -----------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "truncate -s0 main.py",
        "dd of=data.db",
        ": > f",
        "> f",
        "echo x >> f",
        "cp /dev/null src/app.py",
        "mv README.md /dev/null",
        "sed -i '1,$d' src/app.py",
        "tee f < /dev/null",
        "tar --remove-files -cf x.tar src",
        "git checkout -f",
        "git restore .",
        "git stash drop",
        "git stash",
        "git commit -m x",
        "git push",
        "git add .",
        "pip install x",
        "npm install",
        "cargo add serde",
        "go mod tidy",
        "uv sync",
        "ln -sf /dev/null x",
        "touch x",
        "rm x",
        "chmod +x x",
        "ruff format .",
        "ruff check --fix .",
        "black src",
        "prettier --write src",
        "cargo fmt",
        "make clean",
        "gh pr create --fill",
    ],
)
def test_every_change_of_files_asks(command: str) -> None:
    verdict, rule, _ = classify(command)
    assert (verdict, rule) == ("needs_approval", "allow:changes-files"), command


def test_a_signal_asks_and_says_so() -> None:
    assert classify("kill 123")[:2] == ("needs_approval", "allow:signals")


def test_a_git_config_write_asks_and_a_read_does_not() -> None:
    assert classify("git config core.fsmonitor 'sh -c id'")[1] == "allow:git-config"
    assert classify("git config --global alias.x '!id'")[1] == "allow:git-config"
    assert classify("git config --get user.email")[0] == "safe"
    assert classify("git config user.email")[0] == "safe"


def test_creating_a_directory_is_proven_additive_but_not_read_only() -> None:
    assert classify("mkdir -p build/out") == ("safe", "proof:add", False)


def test_arguments_nobody_has_seen_are_proven_only_for_plain_readers() -> None:
    assert classify("find . -name '*.py' | xargs grep -l TODO") == ("safe", "proof:read", False)
    assert classify("find . -name '*.py' -exec wc -l {} +")[:2] == ("safe", "proof:read")
    assert classify("cat files | xargs rm")[0] == "needs_approval"
    assert classify("cat files | xargs python3")[0] == "needs_approval"
    assert classify("cat files | xargs make")[1] == "allow:unseen-arguments"
    assert classify("cat files | xargs rg --pre=x")[0] == "needs_approval"


def test_decoded_words_and_shells_reading_another_commands_output_ask() -> None:
    assert classify("cat $(echo fi9zZWFt | base64 -d)")[1] == "allow:encoded"
    assert classify("echo fi9zZWFt | base64 -d | xargs cat")[1] == "allow:encoded"
    assert classify("cat $(echo lmth | rev)")[1] == "allow:encoded"
    assert classify("bash <(base64 -d <<< bHM=)")[1] == "allow:runs-output"
    assert classify("ps eww")[1] == "allow:prints-environment"


# --- confinement: read_only only for reads that cannot reach a secret ----------------------


@pytest.mark.parametrize(
    "command",
    [
        "ls -la",
        "cat README.md src/app.py",
        "grep -rn TODO src",
        "cd src && cat app.py",
        "cat /usr/share/dict/words | head",
        "cat /etc/os-release",
        "head /proc/cpuinfo",
        "ls /usr/lib",
        "wc -l *.py",
        "cat /home/me/project/README.md",
        "awk '{print $1}' f",
        "env X=1 ls",
    ],
)
def test_reads_inside_the_project_or_system_locations_are_read_only(command: str) -> None:
    assert classify(command) == ("safe", "proof:read", True), command


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/notes.txt",
        "cat $HOME/notes.txt",
        "cat /home/other/notes.txt",
        "cat /root/notes",
        "cat ../other/secret.txt",
        "cat ../*",
        "ls /",
        "cat /tmp/x",
        "cat /proc/1/cmdline",
        "cat /etc/shadow",
        "cat /etc/ssl/private/server.key",
        "cd .. && cat x",
        "cd /tmp && cat x",
        "cd && cat .bashrc",
        "cat $F",
        "cat <(ls)",
        "env",
        "env -u X",
        "printenv OPENAI_API_KEY",
        "sleep 100 &",
        "ls & disown",
        "history | tail",
        "grep -r key /var/lib",
        "find / -name '*.pem'",
    ],
)
def test_reads_that_could_reach_a_secret_are_never_read_only(command: str) -> None:
    verdict, rule, read_only = classify(command)
    assert not read_only, (command, verdict, rule)


@pytest.mark.parametrize(
    "command",
    [
        "cat ~/.ssh/id_rsa",
        "cat ~/.aws/credentials",
        "cat /proc/$PPID/environ",
        "cat /proc/self/environ",
        "rev ~/.ssh/id_rsa",
        "cut -c1-9 ~/.aws/credentials",
        "cat .env",
        "grep API_KEY .env.local",
        "tr -d ' ' < .env",
        "cat config/master.key",
    ],
)
def test_credential_files_and_environments_ask(command: str) -> None:
    verdict, _, read_only = classify(command)
    assert verdict == "needs_approval" and not read_only, command


# --- the report ----------------------------------------------------------------------------


def test_a_proof_names_each_program_and_the_widest_kind() -> None:
    found = GUARD.classify("ls | grep x && pytest -q && mkdir -p out", cwd=CWD)
    assert (found.verdict, found.rule) == ("safe", "proof:run")
    assert found.reason == "ls: read · grep: read · pytest: run · mkdir: add"
    assert not found.read_only


def test_the_first_unproven_part_is_named() -> None:
    found = GUARD.classify("ls && frob x && truncate -s0 y", cwd=CWD)
    assert (found.rule, found.reason) == ("allow:unknown-program", found.reason)
    assert found.reason.startswith("frob: ")
    found = GUARD.classify("ls && truncate -s0 y", cwd=CWD)
    assert (found.rule, found.reason) == ("allow:changes-files", "truncate: changes files")

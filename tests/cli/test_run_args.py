"""`seam run`'s arguments read without Typer: the same values Typer gives, or None (and
Typer reads them) for anything that is not plainly well-formed."""

from __future__ import annotations

import pytest

from seam.apps.cli.run_args import RunArgs, parse_run
from tests.cli.conftest import Cli


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["hi"], RunArgs("hi")),
        (["-"], RunArgs("-")),
        (["--", "-starts with a dash"], RunArgs("-starts with a dash")),
        (
            ["--session", "s", "--personality=p", "--model", "m", "--json", "-y", "hi"],
            RunArgs("hi", session="s", personality="p", model="m", json=True, yes=True),
        ),
        (["hi", "--timeout", "2.5", "--yes"], RunArgs("hi", yes=True, timeout=2.5)),
        (["--timeout=0", "hi"], RunArgs("hi", timeout=0.0)),
        (["--session=", "hi"], RunArgs("hi", session="")),
        (["--image", "a.png", "--image=b.jpg", "hi"], RunArgs("hi", images=("a.png", "b.jpg"))),
    ],
)
def test_well_formed_arguments_are_read_as_typer_reads_them(
    args: list[str], expected: RunArgs
) -> None:
    assert parse_run(args) == expected


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["a", "b"],
        ["--session"],
        ["--session", "--json", "hi"],
        ["hi", "--image"],
        ["--session", "a", "--session", "b", "hi"],
        ["--json", "--json", "hi"],
        ["--timeout", "-1", "hi"],
        ["--timeout", "soon", "hi"],
        ["--timeout", "nan", "hi"],
        ["--timeout", "1_000", "hi"],
        ["--unknown", "hi"],
        ["-x", "hi"],
    ],
)
def test_anything_else_is_left_to_typer(args: list[str]) -> None:
    assert parse_run(args) is None


def test_typer_still_answers_help_and_bad_arguments(cli: Cli) -> None:
    helped = cli("run", "--help")
    assert helped.returncode == 0 and "--timeout" in helped.stdout
    bad = cli("run", "--timeout", "-1", "hi")
    assert bad.returncode == 2 and "--timeout" in bad.stderr

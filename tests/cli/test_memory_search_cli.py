"""`seam memory search QUERY` as a person runs it: the console script as a process of its
own, a real SEAM_HOME whose memory files are written as `seam memory add` writes them,
the real embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Cli, make_cli

WIFI = "The wifi password for the lake house is in the blue notebook"
NOTE = "full text only: install the recall extra for search by meaning\n"


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    cli = make_cli(tmp_path, {})
    folder = cli.home / "memory"
    folder.mkdir(parents=True)
    memory = f"{WIFI}\n§\nStaging runs in the AWS account 4471-2290\n"
    (folder / "MEMORY.md").write_text(memory, encoding="utf-8")
    (folder / "USER.md").write_text("Prefers tea over coffee in the morning\n", encoding="utf-8")
    return cli


def test_ranked_matches_say_where_each_came_from(cli: Cli) -> None:
    found = cli.spawn("memory", "search", "where did I write down the cabin's internet login?")
    assert found.returncode == 0 and found.stderr == "", found.stderr
    assert found.stdout.startswith(f"1. MEMORY.md #1  found by meaning\n   {WIFI}\n")
    both = cli.spawn("memory", "search", "--limit", "1", "4471-2290 account")
    assert both.returncode == 0, both.stderr
    assert both.stdout.startswith("1. MEMORY.md #2  found by words")
    assert both.stdout.count("\n") == 2  # one match: its line and its entry
    drink = cli.spawn("memory", "search", "hot drink at breakfast")
    assert drink.stdout.startswith("1. USER.md #1  found by meaning\n")
    assert (cli.home / "memory" / ".vectors.sqlite3").is_file()


def test_recall_off_is_full_text_said_once_on_stderr(cli: Cli) -> None:
    cli.write_config("[recall]\nenabled = false\n")
    found = cli.spawn("memory", "search", "blue notebook")
    assert found.returncode == 0 and found.stderr == NOTE
    assert found.stdout == f"1. MEMORY.md #1  found by words\n   {WIFI}\n"
    none = cli.spawn("memory", "search", "cabin internet login")
    assert (none.returncode, none.stdout, none.stderr) == (
        0,
        "no memory entry matches 'cabin internet login'\n",
        NOTE,
    )


def test_bad_input_is_one_line(cli: Cli) -> None:
    empty = cli.spawn("memory", "search", "  ")
    assert empty.returncode == 2
    assert empty.stderr == "seam: the search is empty: give what to look for\n"
    zero = cli.spawn("memory", "search", "tea", "--limit", "0")
    assert zero.returncode == 2 and "Traceback" not in zero.stderr

"""`seam sessions search` by meaning as well as words: real `seam` processes over a real
SQLite home, the conversation stored by a real `seam run` (the model a loopback server)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply

WIFI = "The wifi password is in the blue notebook."
QUESTION = "where did I write down the cabin's internet login?"
NO_EXTRA = "seam: full text only: install the recall extra for search by meaning\n"


def remember(cli: Cli, server: OpenAIServer) -> None:
    server.push(text_reply("Noted."), text_reply("Tuesday at ten, then."))
    assert cli("run", "--session", "cabin", f"For the cabin: {WIFI}").returncode == 0
    assert cli("run", "--session", "teeth", "Book the dentist for Tuesday").returncode == 0


def test_a_question_sharing_no_word_finds_it_by_meaning(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    remember(cli, openai_server)
    found = cli.spawn("sessions", "search", QUESTION)
    assert found.returncode == 0, found.stderr
    assert found.stderr == ""
    where, said, *_ = found.stdout.splitlines()
    assert where.startswith("cabin  “For the cabin: The wifi password")
    assert where.endswith("(meaning)")
    assert said == f"    you: For the cabin: {WIFI}"
    assert "teeth" not in found.stdout  # unrelated: under the similarity floor
    both = cli.spawn("sessions", "search", "wifi notebook", "--limit", "1")
    assert both.stdout.splitlines()[0].endswith("(words + meaning)")
    assert "no matches for 'zebra'" in cli.spawn("sessions", "search", "zebra").stdout


def test_without_the_extra_it_is_full_text_and_says_so_once(
    cli: Cli, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    remember(cli, openai_server)
    # A `wordllama` that cannot be imported: what a missing extra looks like.
    stub = tmp_path / "no-extra" / "wordllama"
    stub.mkdir(parents=True)
    (stub / "__init__.py").write_text("raise ImportError('not installed')\n")
    cli.env["PYTHONPATH"] = str(stub.parent)
    missed = cli.spawn("sessions", "search", QUESTION)
    assert (missed.returncode, missed.stderr) == (0, NO_EXTRA)
    assert missed.stdout == f"no matches for {QUESTION!r}\n"
    words = cli.spawn("sessions", "search", "wifi notebook")
    assert words.stderr == NO_EXTRA
    assert words.stdout == f"cabin  you: For the cabin: {WIFI}\n"  # as before the extra


def test_turned_off_in_config_it_is_full_text(cli: Cli, openai_server: OpenAIServer) -> None:
    remember(cli, openai_server)
    cli.write_config("[recall]\nenabled = false\n")
    off = cli.spawn("sessions", "search", QUESTION)
    assert off.returncode == 0
    assert off.stderr == (
        "seam: full text only: search by meaning is off ([recall] enabled = false)\n"
    )
    assert off.stdout.startswith("no matches")


def test_bad_input_is_a_one_line_error(cli: Cli, openai_server: OpenAIServer) -> None:
    empty = cli.spawn("sessions", "search", "   ")
    assert empty.returncode != 0
    assert empty.stderr.startswith("seam: the search is empty") and empty.stderr.count("\n") == 1
    cli.write_config("[recall]\nbatch_size = 0\n")
    bad = cli.spawn("sessions", "search", "wifi")
    assert bad.returncode != 0 and "Traceback" not in bad.stderr
    assert "batch_size" in bad.stderr

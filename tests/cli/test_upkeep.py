"""Upkeep through the real `seam`: sessions end (leaving a chat, `/new`, idle time) so
`seam sessions prune` prunes; titles after the first exchange; subagents' sessions are
left out of listings unless asked (issue #12)."""

from __future__ import annotations

import re
import time

import pytest

from tests.cli.conftest import Cli
from tests.cli.test_sessions_export_prune import DAY, key, listed, seed
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process


def test_leaving_a_chat_and_new_end_sessions_so_prune_deletes_them(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("First answer."), text_reply("Second answer."))
    openai_server.push(text_reply("Run answer."))
    chat = cli("chat", "--session", "one", stdin="hello\n/new\nagain\n/exit\n")
    assert chat.returncode == 0, chat.stderr
    run = cli("run", "--session", "kept", "a one-shot question")
    assert run.returncode == 0, run.stderr
    assert len(listed(cli)) == 3

    pruned = cli("sessions", "prune", "--older-than", "0h")

    assert pruned.returncode == 0, pruned.stderr
    assert pruned.stdout == "pruned 2 ended sessions with no activity for 0h\n"
    assert listed(cli) == ["kept"]  # `seam run` leaves its session open


def test_end_of_input_ends_the_chat_session_too(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Hi."))
    assert cli("chat", "--session", "piped", stdin="hello\n").returncode == 0
    pruned = cli("sessions", "prune", "--older-than", "0h")
    assert pruned.stdout == "pruned 1 ended session with no activity for 0h\n"
    assert cli("sessions", "list").stdout.startswith("no sessions yet")


def test_sessions_idle_past_idle_end_are_ended_and_pruned(cli: Cli) -> None:
    cli.write_config('[sessions]\nidle_end = "2h"\n')
    now = time.time()
    seed(
        cli.home / "sessions.db",
        [("idle", now - 3 * 3600, False), ("busy", now - 60, False), ("old", now - 9 * DAY, False)],
    )
    # Ended as of when each went idle: "old" two hours after its last message.
    week = cli("sessions", "prune", "--older-than", "1w")
    assert week.stdout == "pruned 1 ended session with no activity for 1w\n"
    assert listed(cli) == ["busy", "idle"]

    now_ = cli("sessions", "prune", "--older-than", "0h")
    assert now_.stdout == "pruned 1 ended session with no activity for 0h\n"
    assert listed(cli) == ["busy"]


def test_idle_end_is_validated(cli: Cli) -> None:
    cli.write_config('[sessions]\nidle_end = "soon"\n')
    result = cli("sessions", "list")
    assert result.returncode != 0
    assert "idle_end" in result.stderr and "24h" in result.stderr


def test_titles_come_from_the_first_message_and_show_in_listings(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("Sure."), text_reply("Done."), text_reply("Again."))
    first = cli("run", "--session", "trip", "plan a trip to Lisbon in May, please")
    assert first.returncode == 0, first.stderr
    # A second exchange keeps the first title.
    assert cli("run", "--session", "trip", "and book a hotel").returncode == 0
    # A second session asking the same gets a numbered title.
    assert cli("run", "--session", "trip2", "Plan a trip to Lisbon in May, please!").returncode == 0

    cli.env["COLUMNS"] = "160"  # room for whole titles (on 80 columns they are cut with …)
    listing = cli("sessions", "list")
    assert listing.returncode == 0, listing.stderr
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()[1:]}
    assert "Plan a trip to Lisbon in May, please" in lines["trip"]
    assert "#2" not in lines["trip"]
    assert "Plan a trip to Lisbon in May, please #2" in lines["trip2"]

    chat = cli("chat", "--session", "trip", stdin="/sessions\n")
    assert "Plan a trip to Lisbon in May, please" in chat.stdout
    assert len(openai_server.chat_requests) == 3  # no model call for a title


def test_subagent_sessions_are_listed_only_with_all(cli: Cli) -> None:
    now = time.time()
    seed(
        cli.home / "sessions.db",
        [("main", now, False), ("task:main:abc123", now - 10, False)],
    )
    assert key("task:main:abc123")  # a valid key: only the name is reserved
    assert listed(cli) == ["main"]
    everything = cli("sessions", "list", "--all")
    assert everything.returncode == 0, everything.stderr
    assert [line.split()[0] for line in everything.stdout.splitlines()[1:]] == [
        "main",
        "task:main:abc123",
    ]


def test_a_window_too_small_for_the_fixed_prompt_is_said_once_in_chat(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    cli.write_config("[context]\nwindow = 2000\n")
    openai_server.push(text_reply("One."), text_reply("Two."))
    chat = cli("chat", stdin="hello\nagain\n")
    assert chat.returncode == 0, chat.stderr
    notes = [line for line in chat.stdout.splitlines() if line.startswith("note (context):")]
    assert len(notes) == 1, chat.stdout
    assert "tool schemas take ~" in notes[0] and "2,000-token context window" in notes[0]


def test_search_matches_word_stems(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Noted: you like ripe ones."))
    assert cli("run", "--session", "fruit", "I bought two bananas").returncode == 0
    found = cli("sessions", "search", "banana")
    assert found.returncode == 0, found.stderr
    # Found by its word's stem (and by meaning too); the answer about ripe ones by meaning.
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d"
    assert re.fullmatch(
        f"fruit  “I bought two bananas”  {when}  \\(words \\+ meaning\\)\n"
        "    you: I bought two bananas\n"
        f"fruit  “I bought two bananas”  {when}  \\(meaning\\)\n"
        "    seam: Noted: you like ripe ones.\n",
        found.stdout,
    ), found.stdout
    # Full text alone, as before search by meaning: the stem finds the question only.
    cli.write_config("[recall]\nenabled = false\n")
    words = cli("sessions", "search", "banana")
    assert words.stdout == "fruit  you: I bought two bananas\n"

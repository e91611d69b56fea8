"""A long command output is cut to its head and tail; a secret the cut would slice is
redacted whole first, so no piece of it (which no exact-value redaction could find) is
left at either side of the cut."""

from __future__ import annotations

import re

import pytest

from seam.services.sandbox.output import Capture

SECRET = "k3yV4lu3-0123456789abcdefghijklmnopqrstuv"


def redact(text: str) -> str:
    return text.replace(SECRET, "[REDACTED:KEY]")


def pieces_of_the_secret(text: str) -> list[str]:
    return [SECRET[i : i + 8] for i in range(len(SECRET) - 7) if SECRET[i : i + 8] in text]


@pytest.mark.parametrize("at", range(40, 60, 3))
@pytest.mark.parametrize("where", ["head", "tail"])
def test_a_secret_across_the_cut_is_redacted_whole(at: int, where: str) -> None:
    limit = 100  # head 50, tail 50: the secret straddles the cut for these offsets
    filler = "x" * 5000
    text = "a" * at + SECRET + filler if where == "head" else filler + SECRET + "b" * (at - 40)
    capture = Capture(limit)
    for start in range(0, len(text), 7):  # arrives in small pieces, as from a pipe
        capture.feed(text[start : start + 7].encode())
    capture.finish()
    shown = capture.text(redact)
    assert capture.truncated and "characters omitted" in shown
    assert pieces_of_the_secret(shown) == []


def test_without_the_redactor_the_cut_leaves_a_piece_behind() -> None:
    # What the margin guards against: the loop redacts only after the tool returns, when
    # the secret is already cut in two.
    capture = Capture(100)
    capture.feed(b"a" * 40 + SECRET.encode() + b"x" * 5000)
    capture.finish()
    assert pieces_of_the_secret(capture.text()) == [SECRET[:8], SECRET[1:9], SECRET[2:10]]
    assert pieces_of_the_secret(capture.text(redact)) == []


def test_a_short_output_is_whole_and_a_long_one_keeps_its_sizes() -> None:
    short = Capture(100)
    short.feed(b"hello")
    short.finish()
    assert (short.text(redact), short.truncated) == ("hello", False)
    long = Capture(100)
    long.feed(b"h" * 60 + b"m" * 3000 + b"t" * 60)
    long.finish()
    head, tail = re.split(r"\n\[\.\.\. .* omitted \.\.\.\]\n", long.text(redact))
    assert (head, tail) == ("h" * 50, "t" * 50)

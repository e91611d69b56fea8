"""The CLI tests' `cli` fixture (seam wired to the loopback model server), for the chat
tests here."""

from tests.cli.conftest import cli  # noqa: F401  (registers the `cli` fixture)

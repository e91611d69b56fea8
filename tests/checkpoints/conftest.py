"""The `seam` CLI fixtures (`cli`, `openai_server`) of tests/cli, for the undo tests."""

from tests.cli.conftest import cli  # noqa: F401  (registers the `cli` fixture)
from tests.support.openai_server import openai_server_fixture  # noqa: F401

"""The CLI fixtures (`cli`, `openai_server`) for the budget tests."""

from tests.cli.conftest import cli  # noqa: F401
from tests.support.openai_server import openai_server_fixture  # noqa: F401

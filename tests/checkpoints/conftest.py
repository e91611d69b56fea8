"""The surface tests drive the real `seam` command as the CLI tests do."""

from tests.cli.conftest import cli  # noqa: F401  (registers the `cli` fixture)

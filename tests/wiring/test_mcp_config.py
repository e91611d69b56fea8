"""`[mcp.servers.*]` into server specs: `$VAR` expansion, filters, reload; toolset patterns."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from seam.apps.cli.mcp import mcp_report
from seam.contracts.tools import ForeignSchema, ToolContext
from seam.core.scripted_model import ScriptedModel
from seam.core.storage import InMemoryStorage
from seam.core.tool_registry import expand
from seam.plugins.mcp.tools import lean
from seam.wiring import create_runtime
from seam.wiring.mcp import reload_mcp, server_specs
from seam.wiring.settings import ConfigError, load_settings
from seam.wiring.tools import ByOrigin, build_tool_registry
from tests.cli.test_mcp_cli import SERVER

ISSUE_EXAMPLE = """
[mcp.servers.github]
command = ["npx", "-y", "@modelcontextprotocol/server-github"]   # stdio
env = { GITHUB_TOKEN = "$GITHUB_TOKEN" }                        # only what is listed is passed
[mcp.servers.docs]
url = "http://127.0.0.1:9000/mcp"                               # Streamable HTTP
headers = { Authorization = "Bearer $DOCS_TOKEN" }
tools = { allow = ["search*"], deny = [] }
"""


def settings_from(tmp_path: Path, text: str, **env: str):  # type: ignore[no-untyped-def]
    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    return load_settings({"SEAM_HOME": str(tmp_path), **env}, working_dir=tmp_path)


def test_the_issue_example_resolves_with_env_expanded(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, ISSUE_EXAMPLE, GITHUB_TOKEN="gh", DOCS_TOKEN="dt")
    docs, github = server_specs(settings)
    assert github.command == ("npx", "-y", "@modelcontextprotocol/server-github")
    assert github.env == {"GITHUB_TOKEN": "gh"}
    assert (github.connect_timeout, github.call_timeout, github.approval) == (60, 120, "auto")
    assert docs.url == "http://127.0.0.1:9000/mcp"
    assert docs.headers == {"Authorization": "Bearer dt"}
    assert docs.offers("search_pages") and not docs.offers("delete_page")
    assert not docs.problem and not github.problem


def test_an_unset_variable_is_the_servers_problem_not_an_empty_secret(tmp_path: Path) -> None:
    settings = settings_from(tmp_path, ISSUE_EXAMPLE, GITHUB_TOKEN="gh")
    docs, _ = server_specs(settings)
    assert "$DOCS_TOKEN" in docs.problem


@pytest.mark.parametrize(
    "text",
    [
        "[mcp.servers.x]\n",
        '[mcp.servers.x]\ncommand = ["a"]\nurl = "http://h/mcp"\n',
        '[mcp.servers.x]\ncommand = ["a"]\napproval = "sometimes"\n',
        '[mcp.servers.x]\ncommand = ["a"]\ncall_timeout = 0\n',
        '[mcp.servers."a b"]\ncommand = ["a"]\n',
        '[mcp.servers.a__b]\ncommand = ["a"]\n',
    ],
)
def test_bad_server_sections_are_config_errors(tmp_path: Path, text: str) -> None:
    with pytest.raises(ConfigError, match="mcp"):
        settings_from(tmp_path, text)


async def test_reload_rereads_the_config(tmp_path: Path) -> None:
    one = f"[mcp.servers.notes]\ncommand = [{sys.executable!r}, {str(SERVER)!r}]\n"
    settings = settings_from(tmp_path, one)
    async with create_runtime(settings, model=ScriptedModel([])) as runtime:
        assert (await mcp_report(runtime))[0].startswith("notes  ready")
        two = one.replace("notes", "wiki")
        (tmp_path / "config.toml").write_text(two, encoding="utf-8")
        assert sorted(await reload_mcp(runtime)) == ["notes: removed", "wiki: added"]
        assert (await mcp_report(runtime, connect=False))[0].startswith("wiki  not started")
        (tmp_path / "config.toml").write_text("[mcp.servers.x]\n", encoding="utf-8")
        assert (await reload_mcp(runtime))[0].startswith("not reloaded:")


def test_toolset_patterns_expand_to_known_names_in_order() -> None:
    known = dict.fromkeys(["read_file", "mcp__docs__search", "mcp__docs__read", "mcp__gh__pr"])
    assert expand(["read_file", "mcp__docs__*"], known) == [
        "read_file",
        "mcp__docs__read",
        "mcp__docs__search",
    ]
    plain = ["read_file", "terminal"]
    assert expand(plain, known) is plain  # no pattern: the list itself
    registry = build_tool_registry()
    ctx = ToolContext(session_key="s", storage=InMemoryStorage())
    names = [t.name for t in registry.build(["read_*", "write_file", "read_file"], ctx)]
    assert names == ["read_file", "write_file"]


def test_foreign_schemas_are_interpreted_and_titles_dropped() -> None:
    schema = lean(
        {
            "title": "writeArguments",
            "type": "object",
            "properties": {"title": {"title": "Title", "type": "string"}, "n": {"type": "integer"}},
            "required": ["title"],
        }
    )
    assert schema == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["title"],
    }
    validator = ByOrigin(_Never())
    checked = validator.validate(ForeignSchema(schema), {"title": "x", "n": "3"})
    assert checked == {"title": "x", "n": 3}
    with pytest.raises(ValueError, match="'n'"):
        validator.validate(ForeignSchema(schema), {"title": "x", "n": "three"})
    with pytest.raises(ValueError, match="required"):
        validator.validate(ForeignSchema(schema), {})


class _Never:
    def validate(self, schema, args):  # type: ignore[no-untyped-def]
        raise AssertionError("a foreign schema reached the compiling validator")

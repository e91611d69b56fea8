"""The dashboard's Skills and MCP sections in a real browser, against a real `seam serve`
(`page_support.py`): trust a working-directory skill and see `seam skills list` agree;
see a failed MCP server's reason, change a server's approval and see `config.toml` keep
its comments. `config.toml` is written after the server started: each look at the MCP
section applies the file as it is then."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    SEAM,
    Pages,
    Served,
    keep_shot,
    screenshots_on_failure,
    sync_api,
)
from tests.web.test_control_skills import write_skill

expect = sync_api.expect  # Playwright's waits (page_support skips without a browser)
START_MS = 90_000
SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
CONFIG = f"""# the owner's notes: this comment stays
[mcp.servers.notes]
command = [{str(sys.executable)!r}, {str(SERVER)!r}]
tools = {{ allow = ["add", "search", "delete_*"] }}  # no pictures
connect_timeout = 30

[mcp.servers.gone]
command = [{str(sys.executable)!r}, "-c", "raise SystemExit(3)"]
connect_timeout = 30
"""


def seam(served: Served, *args: str) -> str:
    """The CLI as the owner runs it, in the server's working dir and home."""
    env = {k: v for k, v in os.environ.items() if k != "SEAM_HOME"}
    env.update(SEAM_HOME=str(served.home), HOME=str(served.home.parent))
    result = subprocess.run(
        [str(SEAM), *args], cwd=served.project, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def open_section(pages: Pages, label: str) -> Any:
    page = pages.open()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name=label).click()
    return page


@screenshots_on_failure
def test_trust_a_working_directory_skill(pages: Pages, served: Served) -> None:
    project = served.project / ".agents" / "skills"
    write_skill(
        project,
        "release-notes",
        "Write release notes from the git log since the last tag.",
        "1. Run `python3 scripts/run.py`.\n2. Group by <b>kind</b>; never invent entries.",
    )
    write_skill(
        served.home / "skills",
        "tidy-imports",
        "Sort and group a Python module's imports.",
        "Use ruff's isort rules.",
    )
    assert "untrusted" in seam(served, "skills", "list")
    page = open_section(pages, "Skills")
    table = page.get_by_role("table", name="Installed skills")
    row = table.get_by_role("row").filter(has_text="release-notes")
    expect(row).to_contain_text("no: untrusted")

    page.get_by_role("button", name="View release-notes").click()
    text = page.locator(".skill-text")
    expect(text).to_contain_text("Group by <b>kind</b>")  # shown as text, never as HTML
    expect(text).to_contain_text("- scripts/run.py")

    row.get_by_role("button", name="Trust release-notes").click()
    expect(page.locator(".control-status:visible")).to_contain_text("trusted ")
    expect(row).to_contain_text("yes")
    expect(page.locator(".skill-text")).not_to_contain_text("NOT OFFERED")  # still open
    assert "untrusted" not in seam(served, "skills", "list")
    keep_shot(page, "control-skills")


@screenshots_on_failure
def test_mcp_servers_show_their_state_and_take_an_approval(pages: Pages, served: Served) -> None:
    config = served.home / "config.toml"
    config.write_text(CONFIG, encoding="utf-8")
    page = open_section(pages, "MCP")
    gone = page.get_by_role("article", name="gone")
    # The first look starts both servers: a Python MCP server takes seconds to start.
    expect(gone).to_contain_text("failed", timeout=START_MS)
    expect(gone.locator(".mcp-reason")).to_contain_text("Reason: ")
    notes = page.get_by_role("article", name="notes")
    expect(notes).to_contain_text("connected")
    tools = notes.get_by_role("table", name="Tools of notes")
    expect(tools.get_by_role("row").filter(has_text="mcp__notes__add")).to_contain_text("runs")
    expect(tools.get_by_role("row").filter(has_text="picture")).to_contain_text("not offered")

    notes.get_by_label("Approval").select_option("always")
    notes.get_by_role("button", name="Save approval").click()
    status = page.locator(".control-status:visible")
    # The changed server is restarted, and listed again.
    expect(status).to_contain_text("notes: approval is now always", timeout=START_MS)
    add_row = page.get_by_role("article", name="notes").get_by_role("row")
    expect(add_row.filter(has_text="mcp__notes__add")).to_contain_text("asks first")
    text = config.read_text(encoding="utf-8")
    assert 'approval = "always"' in text
    assert "# the owner's notes: this comment stays" in text and "# no pictures" in text
    keep_shot(page, "control-mcp")

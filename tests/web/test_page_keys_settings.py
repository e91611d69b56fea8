"""The Keys and Settings sections in a real browser against a real `seam serve`: a key
created in the page works from httpx and is refused once revoked in the page (and the CLI
sees it); a setting edited in the generated form lands in config.toml with its comments
kept, and seam doctor's checks run from the page."""

from __future__ import annotations

import os
import subprocess
from typing import Any

import httpx

from seam.wiring.settings import load_settings
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import SEAM, Pages, Served, keep_shot, screenshots_on_failure

CONFIG = """# Seam's settings for this machine: keep this note.
[agent]
# How many model calls one turn may make.
max_iterations = 25  # the default, written down

[sandbox]
backend = "auto"
"""


def seam_cli(served: Served, *args: str) -> str:
    env = {**os.environ, "SEAM_HOME": str(served.home), "HOME": str(served.home.parent)}
    done = subprocess.run(
        [str(SEAM), *args], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def open_section(pages: Pages, label: str) -> Any:
    page = pages.open()
    page.get_by_role("navigation", name="Sections").get_by_role("link", name=label).click()
    page.get_by_role("heading", name=label, level=1).wait_for()
    return page


def status_of(page: Any) -> Any:
    return page.locator("main:not([hidden]) .control-status")


def create_key(page: Any, name: str, scope: str) -> str:
    form = page.get_by_role("form", name="Create a key")
    form.get_by_label("Name", exact=True).fill(name)
    form.get_by_label("Scope").select_option(scope)
    form.get_by_label("Name", exact=True).press("Enter")
    page.locator(".key-once strong", has_text=f'"{name}"').wait_for()
    key: str = page.get_by_label("New key").input_value()
    assert key.startswith("seam_"), key
    return key


@screenshots_on_failure
def test_a_key_made_in_the_page_works_until_it_is_revoked_in_the_page(
    pages: Pages, served: Served
) -> None:
    page = open_section(pages, "Keys")
    key = create_key(page, "laptop", "full")
    headers = {"Authorization": f"Bearer {key}"}
    assert httpx.get(f"{served.url}/api/sessions", headers=headers).status_code == 200
    assert "laptop" in seam_cli(served, "keys", "list")
    create_key(page, "phone", "chat")
    grid = page.locator(".key-list table")
    grid.get_by_role("cell", name="phone", exact=True).wait_for()
    page.get_by_role("button", name="Revoke laptop").click()
    page.get_by_role("button", name="Yes, revoke laptop").click()
    status_of(page).filter(has_text="Revoked key laptop").wait_for()
    assert grid.get_by_role("cell", name="laptop", exact=True).count() == 0
    assert httpx.get(f"{served.url}/api/sessions", headers=headers).status_code == 401
    assert "laptop" not in seam_cli(served, "keys", "list")
    page.get_by_role("form", name="Create a key").get_by_label("Tenant", exact=True).fill("alpha")
    create_key(page, "alpha-reader", "read")
    keep_shot(page, "control-keys")


@screenshots_on_failure
def test_a_setting_saved_in_the_form_keeps_the_files_comments_and_checks_run(
    pages: Pages, served: Served
) -> None:
    path = served.home / "config.toml"
    path.write_text(CONFIG, encoding="utf-8")
    page = open_section(pages, "Settings")
    agent = page.get_by_role("group", name="agent", exact=True)
    iterations = agent.get_by_label("max_iterations", exact=True)
    iterations.wait_for()
    assert iterations.input_value() == "25"
    base_url = page.get_by_role("group", name="model", exact=True).get_by_label(
        "base_url", exact=True
    )
    assert base_url.is_disabled()  # OPENAI_BASE_URL sets it
    assert "OPENAI_BASE_URL" in page.get_by_role("group", name="model", exact=True).inner_text()
    iterations.fill("40")
    page.get_by_role("group", name="reflection", exact=True).get_by_label(
        "enabled", exact=True
    ).check()
    page.get_by_role("button", name="Save").click()
    status_of(page).filter(has_text="Saved ").wait_for()
    assert "restart" in status_of(page).inner_text()
    text = path.read_text(encoding="utf-8")
    assert "# Seam's settings for this machine: keep this note." in text
    assert "# How many model calls one turn may make." in text
    assert "max_iterations = 40  # the default, written down" in text
    config = load_settings({}, home=served.home).config
    assert config.agent.max_iterations == 40 and config.reflection.enabled is True
    page.get_by_role("button", name="Run checks").click()
    checks = page.locator(".doctor-results table")
    checks.get_by_role("cell", name="SEAM_HOME", exact=True).wait_for()
    assert "✓ ok" in checks.inner_text()
    assert str(path) in checks.inner_text()
    page.get_by_role("heading", name="Settings", level=1).scroll_into_view_if_needed()
    keep_shot(page, "control-settings")

"""The dashboard's navigation bar in a real browser (Chromium, a real `seam serve`
subprocess): the owner sees all thirteen sections and each label opens its own; the bar
works by keyboard (Tab reaches the links, Enter opens one and the focus lands on its
heading); a tenant's key and a `chat` key see only the sections they may open; at phone
width the bar scrolls sideways and every section can still be opened.

Only the bar is tested here: each section's content is its own test's business."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    DESKTOP,
    PHONE,
    SEAM,
    WAIT_MS,
    Pages,
    Served,
    screenshots_on_failure,
)

LABELS = [
    "Chat",
    "Sessions",
    "Cron",
    "Memory",
    "Personalities",
    "Skills",
    "MCP",
    "Approvals",
    "Usage",
    "Logs",
    "Channels",
    "Keys",
    "Settings",
]
TENANT_LABELS = ["Chat", "Sessions", "Memory", "Personalities", "Usage"]
CHAT_SCOPE_LABELS = ["Chat", "Sessions"]


def bar(page: Any) -> Any:
    return page.get_by_role("navigation", name="Sections")


def labels(page: Any) -> list[str]:
    links = bar(page).get_by_role("link")
    links.first.wait_for()
    return [text.strip() for text in links.all_inner_texts()]


def section_id(label: str) -> str:
    return label.lower()


def shows(page: Any, label: str) -> None:
    """The section `label` is the one shown: its heading visible, its link current."""
    if label == "Chat":
        page.locator("#view-chat").wait_for(state="visible")
        page.locator("#views > main:not([hidden])").wait_for(state="detached")
    else:
        view = page.locator(f"#view-{section_id(label)}")
        view.get_by_role("heading", name=label, level=1).wait_for(state="visible")
        page.locator("#view-chat").wait_for(state="hidden")
    current = bar(page).locator("a[aria-current=page]")
    assert current.inner_text().strip() == label


@contextmanager
def keyed_page(browser: Any, served: Served, tenant: str, scope: str = "full") -> Iterator[Any]:
    """A page whose every request carries a key made with `seam keys create`."""
    name = f"nav-{tenant}-{scope}"
    env = {**os.environ, "SEAM_HOME": str(served.home), "HOME": str(served.home.parent)}
    made = subprocess.run(
        [str(SEAM), "keys", "create", name, "--tenant", tenant, "--scope", scope],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    key = made.stdout.strip()
    context = browser.new_context(
        viewport=DESKTOP, extra_http_headers={"Authorization": f"Bearer {key}"}
    )
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        page.goto(served.url + "/")
        yield page
    finally:
        context.close()


@screenshots_on_failure
def test_the_owner_sees_every_section_and_each_label_opens_its_own(pages: Pages) -> None:
    page = pages.open()
    assert labels(page) == LABELS
    shows(page, "Chat")
    for label in [*LABELS[1:], "Chat"]:
        bar(page).get_by_role("link", name=label, exact=True).click()
        shows(page, label)
        if label != "Chat":
            assert page.evaluate("() => location.hash") == f"#/{section_id(label)}"


@screenshots_on_failure
def test_the_bar_works_by_keyboard_and_the_focus_lands_on_the_heading(pages: Pages) -> None:
    page = pages.open()
    labels(page)
    reached = []
    for _ in range(len(LABELS) + 3):  # the skip link comes first
        page.keyboard.press("Tab")
        focused = page.evaluate("() => document.activeElement.textContent.trim()")
        reached.append(focused)
        if focused == "Cron":
            break
    assert reached[-1] == "Cron", reached
    assert {"Chat", "Sessions"} <= set(reached)
    page.keyboard.press("Enter")
    shows(page, "Cron")
    page.wait_for_function("() => document.activeElement?.id === 'title-cron'")
    # Shift+Tab goes back into the bar; Enter opens the section before it.
    page.locator("a[data-section=usage]").focus()
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    shows(page, "Approvals")
    page.wait_for_function("() => document.activeElement?.id === 'title-approvals'")


@screenshots_on_failure
def test_a_tenants_key_sees_only_its_own_sections(
    pages: Pages, browser: Any, served: Served
) -> None:
    with keyed_page(browser, served, "alpha") as page:
        assert labels(page) == TENANT_LABELS
        for label in TENANT_LABELS[1:]:
            bar(page).get_by_role("link", name=label, exact=True).click()
            shows(page, label)
        # An owner-only section's address does not open it: the chat shows instead.
        page.goto(served.url + "/#/keys")
        labels(page)
        shows(page, "Chat")
        assert page.locator("#view-keys").count() == 0


@screenshots_on_failure
def test_a_chat_key_sees_only_chat_and_sessions(pages: Pages, browser: Any, served: Served) -> None:
    with keyed_page(browser, served, "alpha", scope="chat") as page:
        assert labels(page) == CHAT_SCOPE_LABELS
        bar(page).get_by_role("link", name="Sessions", exact=True).click()
        shows(page, "Sessions")


@screenshots_on_failure
def test_at_phone_width_the_bar_scrolls_and_every_section_opens(pages: Pages) -> None:
    page = pages.open(viewport=PHONE)
    assert labels(page) == LABELS
    nav = page.locator("nav.sections")
    assert nav.evaluate("n => n.scrollWidth > n.clientWidth")  # it scrolls, not wraps
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    heights = {
        round(box["y"]) for box in (a.bounding_box() for a in bar(page).get_by_role("link").all())
    }
    assert len(heights) == 1, heights  # one row of links
    last = bar(page).get_by_role("link", name="Settings", exact=True)
    last.click()  # Playwright scrolls it into view first, as a finger would
    shows(page, "Settings")
    assert nav.evaluate("n => n.scrollLeft") > 0
    bar(page).get_by_role("link", name="Chat", exact=True).click()
    shows(page, "Chat")
    # Opened by its address, a section's label is scrolled into sight in the bar.
    page.goto(pages.served.url + "/#/keys")
    shows(page, "Keys")
    box = bar(page).get_by_role("link", name="Keys", exact=True).bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"] + 1, box

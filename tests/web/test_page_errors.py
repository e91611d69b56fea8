"""Errors that tell the truth on the chat page, in a real browser against `seam serve`
(fixtures: `page_support.py`): a model's HTTP 400 is an error in the conversation with
the provider's reason, never "Connection lost"; retries show as they happen; a failed
turn tried again never shows the person's message twice; a long session opens at its
latest message."""

from __future__ import annotations

from typing import Any

from tests.support.openai_server import OpenAIServer, error_reply, text_reply
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    Pages,
    keep_shot,
    screenshots_on_failure,
    send,
    settled,
    statuses,
    sync_api,
    watch_status,
)

REASON = "Invalid value for 'temperature': expected a number at most 2"


def said(page: Any) -> Any:
    """The answers shown (stored or streaming)."""
    return page.locator("#log .msg.assistant:not(.retry-note):not(.rerun-note)")


def users(page: Any, text: str) -> int:
    count: int = page.locator("#log .msg.user", has_text=text).count()
    return count


@screenshots_on_failure
def test_a_model_error_shows_the_providers_reason_in_the_conversation(
    pages: Pages, model: OpenAIServer
) -> None:
    body = {"error": {"message": REASON, "type": "invalid_request_error", "code": None}}
    model.push(error_reply(400, body))
    page = pages.open()
    watch_status(page)
    send(page, "make it warmer")

    # Streamed and then stored, the error is shown once (the stream's copy gives way to
    # the transcript's): auto-waiting checks, as both may be on the page for a moment.
    error = page.locator("#log .turn-error", has_text=REASON)
    sync_api.expect(error).to_have_count(1)
    sync_api.expect(error).to_contain_text("HTTP 400")
    settled(page)
    page.wait_for_function("() => document.getElementById('cancel').disabled")
    assert users(page, "make it warmer") == 1
    sync_api.expect(page.locator("#log .turn-error")).to_have_count(1)
    seen = statuses(page)
    assert not [s for s in seen if "Connection lost" in s], seen
    keep_shot(page, "model-error")
    # Reopened, the session still says why the turn failed, once, after its message: the
    # page follows the log from where the transcript leaves off, so the failed turn is
    # not streamed again beside it.
    with page.expect_request(lambda r: "/events?after=" in r.url) as followed:
        page.reload()
    page.locator("body[data-ready=true]").wait_for()
    page.locator("#history .turn-error", has_text=REASON).wait_for()
    after = int(followed.value.url.rsplit("after=", 1)[1])
    detail = page.evaluate(
        "async () => (await fetch(`/api/sessions/${location.hash.slice(1)}`)).json()"
    )
    assert after == detail["events_after"] > 0
    settled(page)
    assert users(page, "make it warmer") == 1
    assert page.locator("#log .turn-error").count() == 1
    assert "Connection lost" not in page.locator("#status").inner_text()


@screenshots_on_failure
def test_a_providers_retry_is_shown_as_it_happens(pages: Pages, model: OpenAIServer) -> None:
    model.push(error_reply(503, headers={"Retry-After": "3"}), text_reply("Back again."))
    page = pages.open()
    send(page, "are you busy?")

    # One wait for the whole line: it is gone once the attempt starts (3 s on).
    retry = page.locator("#live .retry-note")
    retry.filter(has_text="retrying in").filter(has_text=", 2 of 4: HTTP 503").wait_for()
    keep_shot(page, "provider-retry")
    said(page).last.locator(".body", has_text="Back again.").wait_for()
    settled(page)
    assert retry.count() == 0  # gone once the attempt began
    assert users(page, "are you busy?") == 1


@screenshots_on_failure
def test_a_failed_turn_tried_again_shows_the_message_once(
    pages: Pages, model: OpenAIServer
) -> None:
    # The provider's own four attempts fail, so the server queues the turn to run again.
    busy = {"error": {"message": "the model is overloaded", "type": "server_error"}}
    failures = [error_reply(503, busy, headers={"Retry-After": "0"}) for _ in range(4)]
    model.push(*failures, text_reply("Third time lucky."))
    page = pages.open()
    watch_status(page)
    send(page, "try hard")

    # One wait for the whole note: it is gone once the turn runs again (2 s on).
    waiting = page.locator("#pending .rerun-note").filter(has_text=", 2 of ")
    waiting.locator(".turn-error", has_text="the model is overloaded").wait_for()
    keep_shot(page, "turn-tried-again")
    assert users(page, "try hard") == 1
    said(page).last.locator(".body", has_text="Third time lucky.").wait_for()
    settled(page)
    assert users(page, "try hard") == 1
    assert page.locator("#log .turn-error").count() == 0  # it succeeded in the end
    seen = statuses(page)
    assert not [s for s in seen if "Connection lost" in s], seen


@screenshots_on_failure
def test_a_long_session_opens_at_its_latest_message(pages: Pages, model: OpenAIServer) -> None:
    long = "\n\n".join(f"Paragraph {n} of a long answer." for n in range(40))
    model.push(text_reply(long), text_reply(long), text_reply("The very last words."))
    page = pages.open()
    for n in range(2):
        send(page, f"question {n}")
        said(page).nth(n).locator(".body", has_text="of a long answer").first.wait_for()
        settled(page)
    send(page, "question 2")
    page.locator("#log .body", has_text="The very last words.").wait_for()
    settled(page)
    url = page.url

    other = pages.open()
    other.goto(url)
    other.locator("body[data-ready=true]").wait_for()
    last = other.locator("#log .body", has_text="The very last words.")
    sync_api.expect(last).to_have_count(1)  # replayed on opening, it gives way to history
    sync_api.expect(last).to_be_in_viewport()
    sync_api.expect(other.locator("#log .msg.user", has_text="question 0")).not_to_be_in_viewport()

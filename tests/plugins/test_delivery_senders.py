"""The outbox's file and webhook senders, against real files and a loopback receiver."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from seam.contracts.outbox import OutboxItem
from seam.plugins.delivery.senders import (
    DeliveryFailed,
    FileSender,
    Sender,
    WebhookSender,
    retry_after,
)
from tests.support.webhook_server import webhook_receiver

NOW = 1_700_000_000.0


def item(
    key: str,
    target: str,
    text: str = "hello",
    source: str | None = "cron:daily",
    attempts: int = 1,
) -> OutboxItem:
    payload = json.dumps({"text": text, "source": source})
    return OutboxItem(key, target, payload, "pending", NOW, NOW, attempts=attempts, source=source)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "deliveries"


# Files


async def test_file_sender_appends_one_block_per_delivery(root: Path) -> None:
    sender = FileSender(root)
    assert isinstance(sender, Sender)
    first = await sender.send(item("run-1", "file:daily.md", "First **report**."))
    await sender.send(item("run-2", "file:daily.md", "Second report.", source="cron:other"))
    assert first == str((root / "daily.md").resolve())
    text = (root / "daily.md").read_text()
    blocks = [b for b in text.split("## ") if b]
    assert len(blocks) == 2
    header, body = blocks[0].split("\n", 1)
    assert header.endswith(" · cron:daily") and header[:4].isdigit()  # time + source
    assert "First **report**." in body
    assert "Second report." in blocks[1] and blocks[1].startswith(blocks[1].split(" · ")[0])
    assert text.index("First") < text.index("Second")
    assert (os.stat(root / "daily.md").st_mode & 0o777) == 0o600


async def test_the_same_item_twice_is_written_once(root: Path) -> None:
    sender = FileSender(root)
    await sender.send(item("run-1", "file:daily.md"))
    await sender.send(item("run-1", "file:daily.md", attempts=2))  # a re-claim after a crash
    await sender.send(item("run-2", "file:daily.md"))
    assert (root / "daily.md").read_text().count("hello") == 2


async def test_absolute_paths_inside_the_root_and_subfolders_work(root: Path) -> None:
    sender = FileSender(root)
    await sender.send(item("a", f"file:{root}/team/notes.md"))
    await sender.send(item("b", "file:team/notes.md"))
    assert (root / "team" / "notes.md").read_text().count("hello") == 2


@pytest.mark.parametrize(
    "target", ["file:../escape.md", "file:/etc/passwd", "file:", "file:sub/../../x.md"]
)
async def test_paths_outside_the_root_fail_for_good(root: Path, target: str) -> None:
    with pytest.raises(DeliveryFailed) as failed:
        await FileSender(root).send(item("k", target))
    assert failed.value.permanent
    assert not (root.parent / "escape.md").exists()


async def test_a_symlink_out_of_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DeliveryFailed) as failed:
        await FileSender(root).send(item("k", "file:link/x.md"))
    assert failed.value.permanent
    assert not (tmp_path / "elsewhere" / "x.md").exists()


async def test_a_payload_without_text_fails_for_good(root: Path) -> None:
    broken = OutboxItem("k", "file:a.md", '{"buttons": []}', "pending", NOW, NOW)
    with pytest.raises(DeliveryFailed, match="text") as failed:
        await FileSender(root).send(broken)
    assert failed.value.permanent


async def test_an_unwritable_file_is_retried(root: Path) -> None:
    root.mkdir()
    (root / "a.md").mkdir()  # a directory where the file should be
    with pytest.raises(DeliveryFailed) as failed:
        await FileSender(root).send(item("k", "file:a.md"))
    assert not failed.value.permanent


# Webhooks


async def test_webhook_posts_json_with_the_idempotency_key() -> None:
    async with webhook_receiver() as receiver:
        sender = WebhookSender(allow=["127.0.0.1"])
        try:
            await sender.send(item("run-1:deliver", receiver.url, "Report."))
        finally:
            await sender.aclose()
    [got] = receiver.requests
    assert got.key == "run-1:deliver"
    assert got.body == {
        "key": "run-1:deliver",
        "source": "cron:daily",
        "text": "Report.",
        "created_at": NOW,
    }


@pytest.mark.parametrize(
    ("status", "headers", "permanent", "wait"),
    [
        (404, {}, True, None),
        (400, {}, True, None),
        (410, {}, True, None),
        (301, {"Location": "http://127.0.0.1:1/"}, True, None),
        (408, {}, False, None),
        (429, {"Retry-After": "7"}, False, 7.0),
        (500, {}, False, None),
        (503, {"Retry-After": "120"}, False, 120.0),
    ],
)
async def test_webhook_statuses(
    status: int, headers: dict[str, str], permanent: bool, wait: float | None
) -> None:
    async with webhook_receiver([(status, headers)]) as receiver:
        sender = WebhookSender(allow=["127.0.0.1"])
        try:
            with pytest.raises(DeliveryFailed, match=f"HTTP {status}") as failed:
                await sender.send(item("k", receiver.url))
        finally:
            await sender.aclose()
    assert failed.value.permanent is permanent
    assert failed.value.retry_after == wait


async def test_an_unreachable_webhook_is_retried() -> None:
    async with webhook_receiver() as receiver:
        url = receiver.url
    sender = WebhookSender(timeout=5, allow=["127.0.0.1"])
    try:
        with pytest.raises(DeliveryFailed, match="POST") as failed:
            await sender.send(item("k", url))
    finally:
        await sender.aclose()
    assert not failed.value.permanent


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after("30") == 30.0
    assert retry_after(" 2.5 ") == 2.5
    assert retry_after("-4") == 0.0
    assert retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412480.0 - 60) == 60.0


async def test_a_name_resolving_to_a_private_address_is_refused_before_connecting() -> None:
    asked: list[tuple[str, int]] = []

    async def resolve(host: str, port: int) -> list[str]:
        asked.append((host, port))
        return ["93.184.216.34", "10.1.2.3"]  # one private answer is enough to refuse

    sender = WebhookSender(resolve=resolve)
    try:
        with pytest.raises(DeliveryFailed, match=r"hook\.test resolves to 10\.1\.2\.3") as failed:
            await sender.send(item("k", "https://hook.test/x"))
    finally:
        await sender.aclose()
    assert failed.value.permanent and asked == [("hook.test", 443)]


async def test_the_post_goes_to_the_checked_address_with_the_host_header() -> None:
    """DNS rebinding: the name is resolved once, and the connection is to that answer
    (`hook.test` resolves nowhere else; the listener on loopback receives the POST)."""

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    async with webhook_receiver() as receiver:
        port = receiver.url.rsplit(":", 1)[1].split("/")[0]
        sender = WebhookSender(allow=["127.0.0.0/8"], resolve=resolve)
        try:
            await sender.send(item("k", f"http://hook.test:{port}/x"))
        finally:
            await sender.aclose()
    assert [got.key for got in receiver.requests] == ["k"]


async def test_an_unresolvable_name_is_retried() -> None:
    async def resolve(host: str, port: int) -> list[str]:
        raise OSError("temporary failure in name resolution")

    sender = WebhookSender(resolve=resolve)
    try:
        with pytest.raises(DeliveryFailed, match="could not resolve") as failed:
            await sender.send(item("k", "https://hook.test/x"))
    finally:
        await sender.aclose()
    assert not failed.value.permanent

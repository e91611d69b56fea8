"""The Delivery router: targets, [SILENT], quiet hours (held, flushed), urgent, idempotency."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from seam.contracts.delivery import Delivery, DeliveryError, Notice
from seam.contracts.outbox import Outgoing
from seam.core.execution import InMemoryExecutionStore
from seam.plugins.delivery.quiet import held_count, hold_queued, release_held
from seam.plugins.delivery.router import HELD_FOREVER, DeliveryRouter
from seam.plugins.dnd.checker import FileDndChecker
from seam.plugins.dnd.rules import make_rule
from seam.testing.clock import ManualClock

NOON = 1_781_092_800.0  # 2026-06-10 12:00 UTC, a Wednesday
HOUR = 3600.0
CHATS = ("telegram", "slack", "discord")  # what wiring's registry hands the router


class Rig:
    def __init__(self, tmp_path: Path, *, owner: str | None = "telegram:42") -> None:
        self.clock = ManualClock(NOON)
        self.store = InMemoryExecutionStore(clock=self.clock)
        self.root = tmp_path / "deliveries"
        self.dnd = FileDndChecker([], tmp_path / "dnd.json", clock=self.clock)
        self.router = DeliveryRouter(
            self.store,
            deliveries=self.root,
            owner=owner,
            dnd=self.dnd,
            clock=self.clock,
            chats=CHATS,
        )

    async def due(self) -> list[str]:
        """Keys a deliverer would claim now (any target)."""
        return [item.key for item in await self.store.claim_due("", "test", lease=30.0)]


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return Rig(tmp_path)


def test_is_a_delivery(rig: Rig) -> None:
    assert isinstance(rig.router, Delivery)


@pytest.mark.parametrize(
    ("target", "canonical"),
    [
        ("owner", "owner"),
        (" OWNER ", "owner"),
        ("none", "none"),
        ("telegram:123456789", "telegram:123456789"),
        ("telegram:-100123:7", "telegram:-100123:7"),
        ("Slack:C0123ABC", "slack:C0123ABC"),
        ("discord:987654321", "discord:987654321"),
        ("https://hooks.example.com/seam?x=1", "https://hooks.example.com/seam?x=1"),
        ("http://127.0.0.1:8080/in", "http://127.0.0.1:8080/in"),
    ],
)
def test_each_target_kind_in_canonical_form(rig: Rig, target: str, canonical: str) -> None:
    assert rig.router.check_target(target) == canonical


def test_file_targets_live_under_the_deliveries_folder(rig: Rig) -> None:
    root = rig.root.resolve()
    assert rig.router.check_target("file:daily.md") == f"file:{root}/daily.md"
    assert rig.router.check_target("file:notes/a.md") == f"file:{root}/notes/a.md"
    assert rig.router.check_target(f"file:{root}/b.md") == f"file:{root}/b.md"


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("email:me@example.com", "unknown delivery target 'email:me@example.com': use owner"),
        ("file:../escape.md", "'..' may not appear in the path"),
        ("file:a/../../escape.md", "'..' may not appear in the path"),
        ("file:/etc/passwd", "files are delivered only under"),
        ("file:", "needs a path"),
        ("file:dir/", "names a directory"),
        ("telegram:", "telegram:<chat> needs a chat or channel id"),
        ("telegram:12 34", "telegram:<chat> needs a chat or channel id"),
        ("https://", "a webhook needs http(s)://host/"),
        ("", "unknown delivery target ''"),
    ],
)
def test_bad_targets_are_one_line_errors(rig: Rig, target: str, message: str) -> None:
    with pytest.raises(DeliveryError, match=message.replace("(", r"\(").replace(")", r"\)")) as err:
        rig.router.check_target(target)
    assert "\n" not in str(err.value)


def test_a_symlink_out_of_the_deliveries_folder_is_refused(rig: Rig, tmp_path: Path) -> None:
    rig.root.mkdir()
    (rig.root / "out").symlink_to(tmp_path)
    with pytest.raises(DeliveryError, match="only under"):
        rig.router.check_target("file:out/x.md")
    assert rig.router.check_target("file:in.md").endswith("/deliveries/in.md")


def test_owner_without_gateway_owner_names_the_key(tmp_path: Path) -> None:
    rig = Rig(tmp_path, owner=None)
    with pytest.raises(DeliveryError, match=r"no \[gateway\] owner is configured"):
        rig.router.check_target("owner")
    with pytest.raises(DeliveryError, match=r"\[gateway\] owner must name"):
        Rig(tmp_path, owner="none").router.check_target("owner")


async def test_owner_is_resolved_when_delivering(rig: Rig) -> None:
    result = await rig.router.deliver("owner", "Disk 95% full", Notice(key="k1", source="run-1"))
    assert result.verdict == "queued"
    assert result.item is not None and result.item.target == "telegram:42"
    assert json.loads(result.item.payload) == {
        "text": "Disk 95% full",
        "source": "run-1",
        "urgent": False,
        "held": False,
    }
    assert result.item.source == "run-1"
    assert await rig.due() == ["k1"]


async def test_each_kind_is_enqueued_for_its_sender(rig: Rig) -> None:
    for n, target in enumerate(
        ["slack:C01", "discord:55", "file:log.md", "https://example.com/hook"]
    ):
        await rig.router.deliver(target, "hi", Notice(key=f"k{n}"))
    items = await rig.store.outbox_items()
    assert [item.target for item in items] == [
        "slack:C01",
        "discord:55",
        f"file:{rig.root.resolve()}/log.md",
        "https://example.com/hook",
    ]


async def test_none_and_silent_enqueue_nothing(rig: Rig) -> None:
    assert (await rig.router.deliver("none", "anything", Notice(key="a"))).verdict == "none"
    for text in ("[SILENT]", "  [SILENT]\n"):
        result = await rig.router.deliver("owner", text, Notice(key="b"))
        assert (result.verdict, result.item) == ("silent", None)
    # Only exactly [SILENT] is silent.
    assert (await rig.router.deliver("owner", "[SILENT] but…", Notice(key="c"))).verdict == "queued"
    assert [item.key for item in await rig.store.outbox_items()] == ["c"]


async def test_a_bad_target_fails_delivery_loudly(rig: Rig) -> None:
    with pytest.raises(DeliveryError):
        await rig.router.deliver("file:../x", "text", Notice(key="k"))
    assert await rig.store.outbox_items() == []


async def test_the_same_key_delivers_once(rig: Rig) -> None:
    first = await rig.router.deliver("owner", "first", Notice(key="cron:job@slot"))
    second = await rig.router.deliver("owner", "second", Notice(key="cron:job@slot"))
    assert first.item == second.item
    [item] = await rig.store.outbox_items()
    assert json.loads(item.payload)["text"] == "first"


async def test_held_in_a_quiet_window_and_sent_when_it_ends(rig: Rig) -> None:
    await rig.dnd.add_rule(make_rule("11:00", "13:00"))  # UTC
    result = await rig.router.deliver("owner", "Disk full", Notice(key="k"))
    assert result.verdict == "held"
    assert result.item is not None and result.item.next_attempt_at == NOON + HOUR
    assert await rig.due() == []
    rig.clock.advance(HOUR - 1)
    assert await rig.due() == []
    rig.clock.advance(1)
    assert await rig.due() == ["k"]


async def test_urgent_goes_through_quiet_hours(rig: Rig) -> None:
    await rig.dnd.toggle_indefinite(True)
    result = await rig.router.deliver("owner", "Server down", Notice(key="u", urgent=True))
    assert result.verdict == "queued"
    assert await rig.due() == ["u"]


async def test_the_toggle_holds_until_dnd_off_releases(rig: Rig) -> None:
    await rig.dnd.toggle_indefinite(True)
    result = await rig.router.deliver("owner", "Disk full", Notice(key="k"))
    assert result.verdict == "held"
    assert result.item is not None and result.item.next_attempt_at == HELD_FOREVER
    # Still held, whatever the time; release does nothing while the toggle is on.
    rig.clock.advance(30 * 24 * HOUR)
    assert await release_held(rig.store, rig.dnd, rig.clock()) == 0
    assert await rig.due() == []
    assert await held_count(rig.store, rig.clock()) == 1
    # Asking again with the same key says it is still held.
    assert (await rig.router.deliver("owner", "Disk full", Notice(key="k"))).verdict == "held"

    await rig.dnd.toggle_indefinite(False)
    assert await release_held(rig.store, rig.dnd, rig.clock()) == 1
    assert await held_count(rig.store, rig.clock()) == 0
    [item] = await rig.store.claim_due("", "test", lease=30.0)
    assert item.key == "k" and item.attempts == 1  # the hold cost no attempt


async def test_dnd_off_inside_a_rule_window_releases_at_its_end(rig: Rig) -> None:
    await rig.dnd.add_rule(make_rule("11:00", "14:00"))
    await rig.dnd.toggle_indefinite(True)
    await rig.router.deliver("owner", "Disk full", Notice(key="k"))
    await rig.dnd.toggle_indefinite(False)
    assert await release_held(rig.store, rig.dnd, rig.clock()) == 1
    assert await rig.due() == []
    rig.clock.advance(2 * HOUR)
    assert await rig.due() == ["k"]


async def test_dnd_on_holds_what_was_queued_but_not_yet_sent(rig: Rig) -> None:
    await rig.router.deliver("owner", "Disk full", Notice(key="plain"))
    await rig.router.deliver("owner", "Server down", Notice(key="urgent", urgent=True))
    await rig.store.enqueue("chat:reply", Outgoing("telegram:42", json.dumps({"text": "a reply"})))
    await rig.dnd.toggle_indefinite(True)
    assert await hold_queued(rig.store, rig.clock()) == 1
    assert sorted(await rig.due()) == ["chat:reply", "urgent"]
    await rig.dnd.toggle_indefinite(False)
    await release_held(rig.store, rig.dnd, rig.clock())
    assert await rig.due() == ["plain"]


def test_held_forever_is_finite() -> None:
    assert not math.isinf(HELD_FOREVER)

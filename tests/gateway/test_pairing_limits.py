"""Pairing under abuse: a flood of strangers keeps at most `max_pending` codes waiting per
platform (the oldest dropped, logged), and a hostile display name never reaches the
terminal or the log with its control characters."""

from __future__ import annotations

import logging
import os
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from seam.apps.gateway.pairing import PairingStore
from seam.contracts.chat import ChatRef, InboundMessage
from seam.contracts.names import clean_name
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.harness import gateway_running, make_runtime, until
from tests.support.in_process import run_seam

# ESC sequences that clear the screen and recolour it, a forged log line, and a bidi
# override that shows the rest backwards.
HOSTILE = "\x1b[2J\x1b[31mMallory\x1b[0m\n2026-01-01 INFO approved\u202eevil\x9b"


@pytest.fixture
def memory_dir(tmp_path: Path) -> Iterator[Path]:
    """A tmp dir in RAM (/dev/shm) when there is one, else `tmp_path`. Each request
    replaces the pairing file by a rename, and ext4 starts writing the new file's blocks
    out on every rename over an old one: on a busy disk that is about 5 ms a request, most
    of a 10,000-request test's minute, and not what the test measures."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=shm, prefix="seam-test-") as where:
        yield Path(where)


class Counted(logging.Handler):
    """Counts the drop warnings (and keeps the first), holding no records."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.drops = 0
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        if "dropped the oldest" in record.getMessage():
            self.drops += 1
            self.first = self.first or record.getMessage()


def test_ten_thousand_requests_keep_the_pending_codes_at_the_cap(memory_dir: Path) -> None:
    cap = 20
    path = memory_dir / "pairing.json"
    store = PairingStore(path, max_pending=cap)
    counted = Counted()
    logger = logging.getLogger("seam.apps.gateway.pairing")
    logger.addHandler(counted)
    logger.propagate = False  # pytest's capture keeps every record: not what is measured
    try:
        for n in range(9_000):
            store.request("telegram", str(n), f"user{n}", f"telegram:{n}")
        size_before = path.stat().st_size
        tracemalloc.start()  # the last thousand traced: allocations must not pile up
        try:
            base = tracemalloc.get_traced_memory()[0]
            for n in range(9_000, 10_000):
                store.request("telegram", str(n), f"user{n}", f"telegram:{n}")
            grown, peak = (m - base for m in tracemalloc.get_traced_memory())
        finally:
            tracemalloc.stop()
    finally:
        logger.removeHandler(counted)
        logger.propagate = True
    pending = store.pending()
    assert len(pending) == cap
    assert [p.user_id for p in pending] == [str(n) for n in range(10_000 - cap, 10_000)]
    assert path.stat().st_size <= size_before * 1.05  # the file does not grow
    assert grown < 64 * 1024 and peak < 1024 * 1024, (grown, peak)
    assert counted.drops == 10_000 - cap and "(telegram:0, user0)" in counted.first


def test_the_cap_is_per_platform(tmp_path: Path) -> None:
    store = PairingStore(tmp_path / "pairing.json", max_pending=2)
    for n in range(5):
        store.request("telegram", f"t{n}", "T", "x")
    store.request("slack", "s0", "S", "y")
    platforms = sorted(p.platform for p in store.pending())
    assert platforms == ["slack", "telegram", "telegram"]


def test_the_cap_is_read_from_the_gateway_section(tmp_path: Path) -> None:
    from seam.wiring.settings import load_settings

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[gateway]\nmax_pending_pairings = 3\n")
    os.environ["SEAM_HOME"] = str(home)
    try:
        assert PairingStore.for_settings(load_settings()).max_pending == 3
    finally:
        del os.environ["SEAM_HOME"]


def test_clean_name_drops_controls_and_bidi_marks_but_keeps_the_rest() -> None:
    assert clean_name(HOSTILE) == "[2J[31mMallory[0m2026-01-01 INFO approvedevil"
    assert clean_name(" Zoë 👩\u200d💻 ") == "Zoë 👩\u200d💻"
    message = InboundMessage(ChatRef("telegram", "9"), "1", "9", HOSTILE, "hi")
    assert "\x1b" not in message.user_name and "\n" not in message.user_name


def test_seam_pairing_list_prints_no_escape_codes_for_a_hostile_name(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "SEAM_HOME": str(home), "HOME": str(tmp_path)}
    store = PairingStore(home / "pairing.json")
    store.request("telegram", "99", HOSTILE, "telegram:99")
    raw = home / "pairing.json"  # a file written before names were cleaned
    raw.write_text(raw.read_text().replace("Mallory", "Mallory\\u001b[5m"))
    listed = run_seam(["pairing", "list"], env=env, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "Mallory" in listed.stdout
    printed = listed.stdout.replace("\t", " ").replace("\n", " ")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in printed)
    assert "\u202e" not in printed and len(listed.stdout.splitlines()) == 1


async def test_a_hostile_name_reaches_neither_the_store_nor_the_log_raw(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    platform = FakePlatform()
    runtime = make_runtime(ScriptedModel([]), InMemoryExecutionStore())
    with caplog.at_level(logging.INFO):
        async with gateway_running(runtime, platform, tmp_path):
            chat = ChatRef("telegram", "77")
            platform.push(InboundMessage(chat, "1", "77", HOSTILE, "hi", received_at=time.time()))
            await until(platform, lambda: bool(platform.sent_texts()), "the code")
    [request] = PairingStore(tmp_path / "pairing.json").pending()
    assert request.user_name == clean_name(HOSTILE)
    logged = "".join(r.getMessage() for r in caplog.records)
    assert "Mallory" in logged and "\x1b" not in logged and "\u202e" not in logged


def test_a_bad_cap_is_a_one_line_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("[gateway]\nmax_pending_pairings = 0\n")
    env = {**os.environ, "SEAM_HOME": str(home), "HOME": str(tmp_path)}
    listed = run_seam(["pairing", "list"], env=env, cwd=tmp_path)
    assert listed.returncode == 1 and "Traceback" not in listed.stderr
    assert "max_pending_pairings" in listed.stderr and len(listed.stderr.splitlines()) == 1

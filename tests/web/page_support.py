"""What the chat page's browser tests share: Playwright drives Debian's Chromium against a
real `seam serve` subprocess whose model is the scripted loopback OpenAI server.

One server, one model and one browser serve the whole module (per pytest worker): starting
`seam serve` took 2-20 s a test. Each test opens its own browser context and starts from
`/`, which opens a new session, so tests do not see each other's conversations; the
model's script and records are reset before each test.

Playwright's own browser download is not reachable from these machines, so the tests launch
/usr/bin/chromium (`scripts/ensure-chromium` installs it); without it they skip. On a
failure every open page is saved as a PNG into the test's tmp dir (the path is printed).
Set SEAM_PAGE_SHOTS=DIR to also keep screenshots of the page at desktop and phone width.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.support.gateway_process import stop
from tests.support.shared_model import (
    SharedModel,
    shared_model_fixture,
)

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "Debian's chromium is not installed (scripts/ensure-chromium)", allow_module_level=True
    )
sync_api = pytest.importorskip("playwright.sync_api")

ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
SEAM = Path(sys.executable).with_name("seam")
WAIT_MS = 20_000
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}
_PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SEAM_MODEL", "SEAM_HOME")


@dataclass
class Served:
    url: str
    login: str
    project: Path
    home: Path


@dataclass
class SignedIn:
    """What opening the single-use login link left: the browser's cookie, the security
    headers of the link's redirect, and the address the page ended on."""

    storage_state: Any
    login_headers: dict[str, str]
    search: str


def sign_in(browser: Any, served: Served) -> SignedIn:
    """Open the login link once (it sets the session cookie, then redirects to /)."""
    context = browser.new_context(viewport=DESKTOP)
    context.set_default_timeout(WAIT_MS)
    try:
        page = context.new_page()
        response = page.goto(served.login)
        page.locator("body[data-ready=true]").wait_for()
        headers = response.request.redirected_from.response().headers
        return SignedIn(context.storage_state(), dict(headers), page.evaluate("location.search"))
    finally:
        context.close()


@dataclass
class Pages:
    """Opens pages signed in to the served app; remembers them for failure screenshots.

    The login link works once: the module signs in once (`sign_in`), every page starts
    from that cookie (as another tab of the same browser would)."""

    browser: Any
    served: Served
    shots: Path
    signed_in: SignedIn
    opened: list[Any] = field(default_factory=list)

    def open(self, viewport: dict[str, int] = DESKTOP, via: str | None = None) -> Any:
        state = self.signed_in.storage_state
        context = self.browser.new_context(viewport=viewport, storage_state=state)
        context.set_default_timeout(WAIT_MS)
        page = context.new_page()
        self.opened.append(page)
        page.goto((via or self.served.url) + "/")  # no hash: a new session
        page.locator("body[data-ready=true]").wait_for()
        return page

    def close(self) -> None:
        for page in self.opened:
            page.context.close()


class LoopbackListener:
    """A TCP listener on 127.0.0.1 whose thread hands each connection to `handle`.
    A subclass sets what `handle` uses before calling `__init__` (it starts the thread)."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            self.handle(conn)

    def handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        self.listener.close()


class CuttableProxy(LoopbackListener):
    """A loopback TCP proxy in front of `seam serve` whose open connections a test can cut,
    as a flaky network does (the browser's offline emulation leaves open streams alone)."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()
        self.cuts = 0
        super().__init__()

    def handle(self, client: socket.socket) -> None:
        server = socket.create_connection(self.upstream)
        with self.lock:
            self.open |= {client, server}
        for a, b in ((client, server), (server, client)):
            threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        """Drop every connection open now; new ones go through."""
        with self.lock:
            dropped, self.open = self.open, set()
        for end in dropped:
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
        self.cuts += 1

    def close(self) -> None:
        super().close()
        self.cut()


def watch_status(page: Any) -> None:
    """Keep every text the status line shows from now on (a lost connection's is brief)."""
    page.evaluate(
        """() => {
             const status = document.getElementById('status');
             window.seamStatuses = [];
             new MutationObserver(() => window.seamStatuses.push(status.textContent))
               .observe(status, { childList: true, characterData: true, subtree: true });
           }"""
    )


def statuses(page: Any) -> list[str]:
    seen: list[str] = page.evaluate("() => window.seamStatuses")
    return seen


F = TypeVar("F", bound=Callable[..., Any])


def screenshots_on_failure(test: F) -> F:
    """Save every open page as a PNG in the test's tmp dir when the test fails."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        pages: Pages = kwargs["pages"]
        try:
            return test(*args, **kwargs)
        except BaseException:
            for n, page in enumerate(pages.opened):
                path = pages.shots / f"failure-{n}.png"
                try:
                    page.screenshot(path=str(path), full_page=True)
                    print(f"screenshot of the failing page: {path}")
                except Exception as exc:  # the browser may be what failed
                    print(f"no screenshot of page {n}: {exc}")
            raise

    return wrapper  # type: ignore[return-value]


def keep_shot(page: Any, name: str) -> None:
    """A screenshot for a person to look at, when SEAM_PAGE_SHOTS names a folder."""
    folder = os.environ.get("SEAM_PAGE_SHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / f"{name}.png"), full_page=True)


@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=ARGS, headless=True
        )
        yield chromium
        chromium.close()


@pytest.fixture(name="model")
def model_fixture(shared_model: SharedModel) -> SharedModel:
    shared_model.reset()
    return shared_model


@pytest.fixture(scope="module", name="served")
def served_fixture(
    tmp_path_factory: pytest.TempPathFactory, shared_model: SharedModel
) -> Iterator[Served]:
    with serving_seam(tmp_path_factory.mktemp("served"), shared_model) as served:
        yield served


@contextlib.contextmanager
def serving_seam(tmp_path: Path, model: SharedModel, config: str = "") -> Iterator[Served]:
    """`seam serve` over `model` in a home of its own under `tmp_path`, with `config` as
    its config.toml (a module that needs a configured server starts its own)."""
    project = tmp_path / "project"
    project.mkdir()
    user = tmp_path / "user"
    user.mkdir()
    home = user / ".seam"
    pirate = home / "personalities" / "pirate"
    pirate.mkdir(parents=True)
    (pirate / "SOUL.md").write_text("You are a pirate. Talk like one.", encoding="utf-8")
    if config:
        (home / "config.toml").write_text(config, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in _PROVIDER_ENV}
    env.update(
        HOME=str(user),
        SEAM_HOME=str(home),
        OPENAI_BASE_URL=model.base_url,
        OPENAI_API_KEY="test-key",
    )
    proc = subprocess.Popen(
        [str(SEAM), "serve", "--port", "0"],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        first = proc.stdout.readline()
        login = proc.stdout.readline()
        if not first.startswith("seam serve: listening on "):
            proc.kill()
            pytest.fail(f"seam serve did not start: {first}{proc.stderr.read()}")
        yield Served(first.split()[-1].rstrip("/"), login.split()[-1], project, home)
    finally:
        stop(proc)


@pytest.fixture(scope="module", name="signed_in")
def signed_in_fixture(browser: Any, served: Served) -> SignedIn:
    return sign_in(browser, served)


@pytest.fixture(name="pages")
def pages_fixture(
    browser: Any, served: Served, signed_in: SignedIn, model: SharedModel, tmp_path: Path
) -> Iterator[Pages]:
    opened = Pages(browser, served, tmp_path, signed_in)
    yield opened
    opened.close()


def send(page: Any, text: str) -> None:
    """Type a message and press Enter, as a person at a keyboard does."""
    prompt = page.locator("#prompt")
    prompt.fill(text)
    prompt.press("Enter")


def answers(page: Any) -> Any:
    return page.locator("#log .msg.assistant")


def settled(page: Any) -> None:
    """Wait until no streamed bubble is left: every answer is shown from the transcript.
    (Waits are given as functions: an expression string is run through eval, which the
    page's policy refuses.)"""
    page.wait_for_function("() => document.querySelectorAll('#live .msg').length === 0")


def log_text(page: Any) -> str:
    text: str = page.locator("#log").inner_text()
    return text


# What a browser test module imports with `*`: the fixtures, by the names tests ask for.
__all__ = [
    "browser_fixture",
    "model_fixture",
    "pages_fixture",
    "served_fixture",
    "shared_model_fixture",
    "signed_in_fixture",
]

"""The page's login and the headers every response carries: the login link works once
and leaves the address bar at once, the cookie is named for the port and kept from
scripts and other sites, and the policy keeps the page from loading or sending anything
elsewhere."""

from __future__ import annotations

from pathlib import Path

from seam.apps.web.headers import CSP
from seam.core import ScriptedModel
from tests.web.harness import LOGIN, serving

POLICY = (
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "frame-ancestors 'none'",
)


async def test_the_login_link_works_once_and_redirects_to_the_bare_page(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client(None) as browser:
        port = served.url.rsplit(":", 1)[1]
        first = await browser.get("/", params={"token": LOGIN})
        assert first.status_code == 303 and first.headers["location"] == "/"
        cookie = first.headers["set-cookie"]
        assert cookie.startswith(f"seam_session_{port}=")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
        assert (await browser.get("/api/sessions")).status_code == 200
        async with served.client(None) as stranger:
            again = await stranger.get("/", params={"token": LOGIN})
            assert again.status_code == 401
            assert "text/html" in again.headers["content-type"]
            assert "works once" in again.text and "seam serve" in again.text
            assert not stranger.cookies
            assert (await stranger.get("/api/sessions")).status_code == 401


async def test_a_cookie_of_another_port_opens_nothing(tmp_path: Path) -> None:
    async with serving(ScriptedModel([]), tmp_path) as served, served.client(None) as browser:
        port = served.url.rsplit(":", 1)[1]
        await browser.get("/", params={"token": LOGIN})
        value = browser.cookies[f"seam_session_{port}"]
        async with served.client(None) as other:
            other.cookies.set("seam_session_1", value)
            other.cookies.set("seam_session", value)
            assert (await other.get("/api/sessions")).status_code == 401


async def test_every_response_carries_the_policy(tmp_path: Path) -> None:
    assert all(part in CSP for part in POLICY)
    async with serving(ScriptedModel([]), tmp_path) as served, served.client(None) as browser:
        await browser.get("/", params={"token": LOGIN})
        for path in ("/", "/app.js", "/style.css", "/api/sessions", "/healthz", "/nope"):
            response = await browser.get(path)
            headers = response.headers
            for part in POLICY:
                assert part in headers["content-security-policy"], path
            assert headers["x-content-type-options"] == "nosniff", path
            assert headers["referrer-policy"] == "no-referrer", path
        page = await browser.get("/")
        assert "<script>" not in page.text and "<style" not in page.text
        assert " style=" not in page.text

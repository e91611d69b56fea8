"""Each search provider against the fake service on loopback, speaking its wire format:
what it sends, what it reads back, and its failures as one line that never holds the key."""

from __future__ import annotations

import json

import pytest

from seam.plugins.tools.search_providers import SearchFailed, SearchHit, SearchProvider
from seam.plugins.tools.search_providers.brave import BraveSearch
from seam.plugins.tools.search_providers.http import HttpSearch
from seam.plugins.tools.search_providers.searxng import SearxngSearch
from seam.plugins.tools.search_providers.tavily import TavilySearch
from tests.support.fake_search import (
    KEY,
    FakeSearch,
    Hit,
    fake_search_fixture,  # noqa: F401  (registers the `fake_search` fixture)
)

HITS = [
    Hit("One", "https://one.example/a", "first <strong>hit</strong>"),
    Hit("Two", "https://two.example/b", "second"),
    Hit("Three", "https://three.example/c", "third"),
]


def providers(fake: FakeSearch, key: str = KEY) -> list[HttpSearch]:
    return [
        SearxngSearch(fake.url, timeout=5),
        BraveSearch(key, url=fake.url, timeout=5),
        TavilySearch(key, url=fake.url, timeout=5),
    ]


@pytest.mark.parametrize("index", [0, 1, 2], ids=["searxng", "brave", "tavily"])
async def test_each_provider_reads_its_own_answer(fake_search: FakeSearch, index: int) -> None:
    fake_search.hits = HITS
    provider = providers(fake_search)[index]
    assert isinstance(provider, SearchProvider)

    hits = await provider.search("cabin wifi", 2)

    assert hits == [
        SearchHit("One", "https://one.example/a", "first <strong>hit</strong>"),
        SearchHit("Two", "https://two.example/b", "second"),
    ]
    await provider.aclose()


async def test_the_requests_are_each_apis_own(fake_search: FakeSearch) -> None:
    fake_search.hits = HITS
    searxng, brave, tavily = providers(fake_search)
    for provider in (searxng, brave, tavily):
        await provider.search("cabin wifi", 3)

    sx, br, tv = fake_search.searches()
    assert (sx.method, sx.path, sx.query) == (
        "GET",
        "/search",
        {"q": "cabin wifi", "format": "json"},
    )
    assert (br.method, br.path) == ("GET", "/res/v1/web/search")
    assert br.query == {"q": "cabin wifi", "count": "3"}
    assert br.headers["x-subscription-token"] == KEY
    assert br.headers["accept"] == "application/json"
    assert (tv.method, tv.path) == ("POST", "/search")
    assert tv.headers["authorization"] == f"Bearer {KEY}"
    assert tv.body == {"query": "cabin wifi", "max_results": 3, "search_depth": "basic"}
    # No key goes where it does not belong: not in a URL, not to SearXNG.
    assert all(KEY not in json.dumps(r.query) for r in (sx, br, tv))
    assert not any(KEY in value for value in sx.headers.values())


async def test_one_client_serves_every_search(fake_search: FakeSearch) -> None:
    fake_search.hits = HITS
    provider = SearxngSearch(fake_search.url, timeout=5)
    await provider.search("a", 1)
    first = provider._client
    await provider.search("b", 1)
    assert first is not None and provider._client is first
    await provider.aclose()


@pytest.mark.parametrize("index", [1, 2], ids=["brave", "tavily"])
async def test_a_wrong_key_is_one_line_without_the_key(fake_search: FakeSearch, index: int) -> None:
    wrong = "wrong-key-9f8e7d6c5b4a39281706"
    provider = providers(fake_search, key=wrong)[index]

    with pytest.raises(SearchFailed) as caught:
        await provider.search("q", 5)

    message = str(caught.value)
    assert message.startswith(f"{provider.name} answered HTTP 401 Unauthorized (check the API key)")
    assert "\n" not in message and wrong not in message and KEY not in message


async def test_a_body_that_echoes_the_key_is_scrubbed(fake_search: FakeSearch) -> None:
    fake_search.fail_with = (500, json.dumps({"error": f"bad token {KEY} refused"}))
    with pytest.raises(SearchFailed) as caught:
        await BraveSearch(KEY, url=fake_search.url, timeout=5).search("q", 5)
    message = str(caught.value)
    assert message.startswith("brave answered HTTP 500 Internal Server Error:")
    assert KEY not in message and "[key]" in message


async def test_a_redirect_is_not_followed_with_the_key(fake_search: FakeSearch) -> None:
    fake_search.redirect_to = "https://elsewhere.example/res/v1/web/search"
    with pytest.raises(SearchFailed) as caught:
        await BraveSearch(KEY, url=fake_search.url, timeout=5).search("q", 5)
    assert str(caught.value) == (
        "brave answered HTTP 301 Moved Permanently (redirects are not followed; set url to"
        " where it points: https://elsewhere.example/res/v1/web/search)"
    )
    assert len(fake_search.searches()) == 1


async def test_searxng_without_json_says_what_to_enable(fake_search: FakeSearch) -> None:
    fake_search.fail_with = (403, "<html><title>403 Forbidden</title></html>")
    with pytest.raises(SearchFailed, match=r"HTTP 403 Forbidden .*search\.formats"):
        await SearxngSearch(fake_search.url, timeout=5).search("q", 5)


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"<html>not json</html>", "searxng answered with something that is not JSON"),
        (b'{"results": "nope"}', "searxng answered JSON without a list of results"),
        (b'{"answers": []}', "searxng answered JSON without a list of results"),
    ],
)
async def test_a_bad_body_is_one_line(fake_search: FakeSearch, raw: bytes, said: str) -> None:
    fake_search.raw = raw
    with pytest.raises(SearchFailed) as caught:
        await SearxngSearch(fake_search.url, timeout=5).search("q", 5)
    assert str(caught.value) == said


async def test_items_without_a_url_are_skipped(fake_search: FakeSearch) -> None:
    fake_search.raw = json.dumps(
        {"results": [{"title": "no url"}, "junk", {"title": "ok", "url": "https://ok.example/"}]}
    ).encode()
    hits = await SearxngSearch(fake_search.url, timeout=5).search("q", 5)
    assert hits == [SearchHit("ok", "https://ok.example/", "")]


async def test_brave_with_no_web_results_is_empty(fake_search: FakeSearch) -> None:
    fake_search.raw = b'{"type": "search", "query": {"original": "q"}}'
    assert await BraveSearch(KEY, url=fake_search.url, timeout=5).search("q", 5) == []


async def test_a_slow_provider_times_out(fake_search: FakeSearch) -> None:
    fake_search.stall = 2.0
    with pytest.raises(SearchFailed) as caught:
        await TavilySearch(KEY, url=fake_search.url, timeout=0.3).search("q", 5)
    assert str(caught.value) == "tavily did not answer within 0.3 s"


async def test_an_unreachable_provider_is_one_line() -> None:
    from tests.support.openai_server import closed_port

    provider = SearxngSearch(f"http://127.0.0.1:{closed_port()}", timeout=5)
    with pytest.raises(SearchFailed) as caught:
        await provider.search("q", 5)
    assert str(caught.value).startswith("could not reach searxng: ConnectError")
    assert "\n" not in str(caught.value)


def test_a_provider_url_must_be_http() -> None:
    with pytest.raises(ValueError, match="http:// or https://"):
        SearxngSearch("ftp://search.example")

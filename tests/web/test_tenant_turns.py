"""A tenant's turns use the tenant's own memory and personality overrides, end to end: a
real `seam serve` app (the runtime the settings describe, on uvicorn over loopback), a
real SQLite store and the files on disk; only the model's decisions are scripted.

Tenant `alpha` writes its memory and a SOUL override through the API; its turns see both
(and its `memory` tool writes its own file); the owner's turns and tenant `beta`'s see
neither, and the owner's files stay byte-identical.
"""

from __future__ import annotations

import asyncio
import shutil
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import uvicorn

from seam.apps.web.app import create_app
from seam.apps.web.auth import Authenticator
from seam.apps.web.backend import WebBackend
from seam.apps.web.keys import KeyStore
from seam.apps.web.serve import server_config
from seam.core import ScriptedModel
from seam.core.scripted_model import call, text_step, tool_step
from seam.plugins.personalities.files import write_default_personality
from seam.wiring.configure import create_runtime
from seam.wiring.settings import Settings, load_settings
from seam.wiring.web import build_web_deps
from seam.wiring.web_keys import WebSection
from tests.cli.conftest import make_cli
from tests.support.openai_server import OpenAIServer, text_reply
from tests.web.harness import sse_events
from tests.web.test_tenants import files_digest

OWNER_SOUL = "You are OWNER-SOUL."
ALPHA_SOUL = "You are ALPHA-SOUL."


def owner_settings(tmp: Path) -> Settings:
    """A home whose owner has a SOUL and a memory of its own."""
    settings = load_settings({"HOME": str(tmp)}, home=tmp / "home", working_dir=tmp)
    write_default_personality(str(settings.personalities_dir))
    (settings.personalities_dir / "default" / "SOUL.md").write_text(OWNER_SOUL, "utf-8")
    (settings.home / "memory").mkdir(parents=True)
    (settings.home / "memory" / "USER.md").write_text("OWNER-MEMORY.\n", "utf-8")
    return settings


@asynccontextmanager
async def served(
    settings: Settings, model: ScriptedModel | None = None
) -> AsyncIterator[dict[str, str]]:
    """`seam serve` as `build_web_deps` makes it (with `model`, when given), on a port
    of its own; yields the base URL and one key per tenant (`local` is the owner)."""
    deps = build_web_deps(settings)
    runtime = deps.runtime
    if model is not None:
        await runtime.aclose()  # the one `seam serve` builds, but with the script
        runtime = create_runtime(settings, model=model)
    backend = WebBackend(
        runtime,
        WebSection(heartbeat_seconds=0.5),
        personalities_dir=deps.personalities_dir,
        tenants_dir=deps.tenants_dir,
    )
    keystore = KeyStore(settings.home / "keys.json")
    keys = {t: keystore.create(f"key-{t}", t) for t in ("local", "alpha", "beta")}
    app = create_app(backend, Authenticator(keystore, b"s" * 32, "login", "local"))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    server = uvicorn.Server(server_config(app, "127.0.0.1", sock.getsockname()[1], backend.config))
    task = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        yield {"url": f"http://127.0.0.1:{sock.getsockname()[1]}", **keys}
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 20)
        sock.close()


def client(served: dict[str, str], tenant: str) -> httpx.AsyncClient:
    headers = {"Authorization": f"Bearer {served[tenant]}"}
    return httpx.AsyncClient(base_url=served["url"], headers=headers, timeout=20)


async def answer(served: dict[str, str], tenant: str, session: str) -> str:
    """One turn in `tenant`'s `session`, to its end; the answer."""
    async with client(served, tenant) as c:
        sent = await c.post(f"/api/sessions/{session}/messages", json={"text": "hello"})
        assert sent.is_success, sent.text
        events = await sse_events(c, f"/api/sessions/{session}/events")
    assert events[-1]["data"]["finish_reason"] != "error", events
    return str(events[-1]["data"]["text"])


async def turn(served: dict[str, str], tenant: str, session: str, model: ScriptedModel) -> str:
    """One turn in `tenant`'s `session`; the system prompt of its first model request."""
    before = len(model.requests)
    await answer(served, tenant, session)
    return model.requests[before].system


async def test_a_tenants_turns_see_its_memory_and_soul_and_no_one_else_does(
    tmp_path: Path,
) -> None:
    settings = owner_settings(tmp_path)
    owner_files = (settings.personalities_dir, settings.home / "memory")
    digest = files_digest(*owner_files)
    model = ScriptedModel(
        [
            tool_step(call("memory", action="add", target="memory", content="ALPHA-TOOL-NOTE.")),
            text_step("noted"),
            *(text_step(f"answer {n}") for n in range(4)),
        ]
    )
    async with served(settings, model) as api:
        async with client(api, "alpha") as alpha:
            put = await alpha.put("/api/memory", json={"user": ["ALPHA-MEMORY."]})
            assert put.status_code == 200, put.text
            soul = {"soul": ALPHA_SOUL, "config": 'name = "Alpha"'}
            assert (await alpha.put("/api/personalities/default", json=soul)).is_success

        alpha_prompt = await turn(api, "alpha", "a", model)
        assert ALPHA_SOUL in alpha_prompt and "ALPHA-MEMORY." in alpha_prompt
        assert OWNER_SOUL not in alpha_prompt and "OWNER-MEMORY" not in alpha_prompt
        alpha_memory = settings.home / "tenants" / "alpha" / "memory"
        assert "ALPHA-TOOL-NOTE." in (alpha_memory / "MEMORY.md").read_text("utf-8")

        owner_prompt = await turn(api, "local", "o", model)
        assert OWNER_SOUL in owner_prompt and "OWNER-MEMORY." in owner_prompt
        beta_prompt = await turn(api, "beta", "b", model)
        assert OWNER_SOUL in beta_prompt  # beta has no override: the owner's personality
        for prompt in (owner_prompt, beta_prompt):
            assert "ALPHA" not in prompt, prompt
        assert "OWNER-MEMORY" not in beta_prompt

        # The tool's note shows from alpha's next session on, in alpha's memory only.
        again = await turn(api, "alpha", "a2", model)
        assert "ALPHA-TOOL-NOTE." in again and "ALPHA-MEMORY." in again
    assert files_digest(*owner_files) == digest
    assert not (settings.home / "tenants" / "beta" / "memory").exists()


async def test_a_tenant_names_a_model_never_a_base_url_nor_a_file(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """A tenant's `model` picks a model of the owner's configured providers: a URL in it
    is a model name sent to the owner's base URL, so nothing reaches the address it
    names; a `local:<path>` ref (a file on the owner's machine) is refused."""
    env = {"HOME": str(tmp_path), "OPENAI_BASE_URL": openai_server.base_url}
    settings = load_settings(
        {**env, "OPENAI_API_KEY": "k"}, home=tmp_path / "h", working_dir=tmp_path
    )
    write_default_personality(str(settings.personalities_dir))
    openai_server.push(text_reply("from the owner's provider"))
    with OpenAIServer() as elsewhere:
        named = f"openai:{elsewhere.base_url}"
        async with served(settings) as api, client(api, "alpha") as alpha:
            soul = {"soul": ALPHA_SOUL, "config": f'model = "{named}"'}
            assert (await alpha.put("/api/personalities/default", json=soul)).is_success
            for ref in ("local:/etc/passwd", "local:model.gguf"):
                body = {"soul": ALPHA_SOUL, "config": f'fallback = ["{ref}"]'}
                refused = await alpha.put("/api/personalities/default", json=body)
                assert refused.status_code == 403, refused.text
                assert "never a file" in refused.json()["error"]["message"]
            assert await answer(api, "alpha", "a") == "from the owner's provider"
        assert elsewhere.requests == []
    sent = openai_server.chat_requests[0].body
    assert isinstance(sent, dict) and sent["model"] == elsewhere.base_url
    assert sent["messages"][0]["content"].startswith(ALPHA_SOUL)


def test_an_owner_cli_turn_keeps_the_owners_memory_and_soul(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """`seam run` is the owner's: a tenant's files on the same home change nothing."""
    env = {"OPENAI_BASE_URL": openai_server.base_url, "OPENAI_API_KEY": "k"}
    cli = make_cli(tmp_path, env, in_process=True)
    settings = owner_settings(tmp_path / "x")
    shutil.copytree(settings.home, cli.home)
    alpha = cli.home / "tenants" / "alpha"
    (alpha / "personalities" / "default").mkdir(parents=True)
    (alpha / "personalities" / "default" / "SOUL.md").write_text(ALPHA_SOUL, "utf-8")
    (alpha / "memory").mkdir()
    (alpha / "memory" / "USER.md").write_text("ALPHA-MEMORY.\n", "utf-8")
    owner_files = files_digest(cli.home / "personalities", cli.home / "memory")
    openai_server.push(text_reply("hi owner"))
    result = cli("run", "hello")
    assert result.returncode == 0, result.stderr
    assert "hi owner" in result.stdout
    sent = openai_server.chat_requests[0].body
    assert isinstance(sent, dict)
    system = sent["messages"][0]["content"]
    assert system.startswith(OWNER_SOUL) and "OWNER-MEMORY." in system
    assert "ALPHA" not in system
    assert files_digest(cli.home / "personalities", cli.home / "memory") == owner_files

"""Diagnostics for `seam doctor`: what is configured, why, and whether each part works.

Wiring, because answering means building the backends exactly as `create_runtime` would.
Each check is a plain result, so a surface decides how to show it. Nothing here loads
the local model unless asked (`deep`): that takes seconds and a lot of memory.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from seam.contracts.messages import Message
from seam.contracts.model import ModelError, ModelRequest
from seam.wiring.models import LOCAL_SETUP_HINT, ModelFactory
from seam.wiring.settings import (
    DEFAULT_OPENAI_BASE_URL,
    DEFAULT_OPENAI_MODEL,
    ConfigError,
    Settings,
    load_settings,
    seam_home,
)
from seam.wiring.tools import build_tool_registry

LIVE_CHECK_TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str
    hint: str = ""


@dataclass(frozen=True, slots=True)
class Diagnosis:
    checks: list[Check]
    config_ok: bool

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)


async def diagnose(
    env: Mapping[str, str] | None = None,
    *,
    deep: bool = False,
    live_timeout: float = LIVE_CHECK_TIMEOUT,
) -> Diagnosis:
    env = os.environ if env is None else env
    home = seam_home(env)
    checks = [_home(home)]
    try:
        settings = load_settings(env, home=home)
    except ConfigError as exc:
        hint = "fix it (or the variable it names) and run seam doctor again"
        checks.append(Check("config", False, str(exc), hint))
        return Diagnosis(checks, config_ok=False)
    path = settings.config_path
    checks.append(
        Check("config", True, f"{path}" if path.exists() else f"{path} (absent: defaults)")
    )
    checks.append(_provider(settings))
    if settings.provider != "local":
        checks.append(await _remote_live(settings, live_timeout))
    else:
        local = _local(settings)
        checks.extend(local)
        if deep and all(check.ok for check in local):
            checks.append(await _generate_one_token(settings))
    checks.append(await _store(settings))
    checks.append(_sandbox(settings))
    checks.extend(_personalities(settings))
    names = build_tool_registry().names()
    checks.append(Check("tools", bool(names), f"{len(names)}: {', '.join(sorted(names))}"))
    room = await _context_room(settings)
    if room is not None:
        checks.append(room)
    from seam.wiring.gateway_doctor import gateway_checks

    checks.extend(gateway_checks(settings))
    return Diagnosis(checks, config_ok=True)


def model_window(settings: Settings) -> int:
    """The context window turns get: `[context] window`, else the provider's setting."""
    config = settings.config
    if config.context.window:
        return config.context.window
    provider = settings.provider
    if provider == "local":
        return config.local.n_ctx
    if provider == "anthropic":
        return config.anthropic.max_context_tokens
    return config.model.max_context_tokens


async def _context_room(settings: Settings) -> Check | None:
    """Whether the default personality's fixed prompt (system prompt without memory or
    project files, plus its tool schemas) leaves the conversation room in the window, by
    the rule the chat's notice uses. None when the personality cannot be read (the
    personalities check says why)."""
    import tempfile

    from seam.contracts.tools import ToolContext
    from seam.core.context_step import room_problem
    from seam.core.storage import InMemoryStorage
    from seam.core.tokens import CharTokenEstimator
    from seam.plugins.personalities.files import (
        FilePersonalityRegistry,
        write_default_personality,
    )
    from seam.wiring.context import build_context_builder

    default_id = settings.config.agent.personality
    try:
        with tempfile.TemporaryDirectory() as scratch:
            root = settings.personalities_dir
            if not root.is_dir():  # what the first run will write
                write_default_personality(scratch)
                root = Path(scratch)
            personality = FilePersonalityRegistry(str(root), default_id=default_id).get(default_id)
    except Exception:
        return None
    storage = InMemoryStorage()
    registry = build_tool_registry()
    tools = registry.build(personality.toolset, ToolContext("doctor", storage))
    prompt = await build_context_builder(settings).build(
        "doctor",
        soul=personality.soul,
        tool_names=[tool.name for tool in tools],
        memory=None,
        storage=storage,
    )
    estimator = CharTokenEstimator()
    fixed = estimator.text(prompt.system) + estimator.tools(registry.definitions(tools))
    size = model_window(settings)
    problem = room_problem(fixed, fixed, size)
    if problem is not None:
        return Check("context window", False, f"personality {default_id}: {problem}")
    share = fixed * 100 // size
    return Check(
        "context window",
        True,
        f"{size:,} tokens; the fixed prompt of {default_id} takes ~{fixed:,} ({share}%)",
    )


def _home(home: Path) -> Check:
    if home.is_dir():
        if os.access(home, os.W_OK | os.X_OK):
            return Check("SEAM_HOME", True, f"{home} (writable)")
        return Check("SEAM_HOME", False, f"{home} is not writable", "fix its permissions")
    if home.exists():
        return Check("SEAM_HOME", False, f"{home} is not a directory", "set SEAM_HOME elsewhere")
    parent = next((p for p in home.parents if p.exists()), None)
    if parent is not None and os.access(parent, os.W_OK | os.X_OK):
        return Check("SEAM_HOME", True, f"{home} (created on first run)")
    return Check("SEAM_HOME", False, f"{home} cannot be created", "set SEAM_HOME elsewhere")


def _provider(settings: Settings) -> Check:
    section = settings.config.model
    if section.provider != "auto":
        why = f"provider = {section.provider!r} in {settings.config_path}"
    elif settings.base_url:
        why = "OPENAI_BASE_URL is set"
    elif settings.api_key:
        why = f"{section.api_key_env} is set"
    elif section.base_url:
        why = f"[model] base_url in {settings.config_path}"
    elif settings.provider == "anthropic":
        why = f"{settings.config.anthropic.api_key_env} is set"
    else:
        why = "no provider configured: using the local model"
    if settings.provider == "local":
        return Check("provider", True, f"local ({why})")
    if settings.provider == "anthropic":
        model = ModelFactory(settings).default_model_name("anthropic")
        return Check("provider", True, f"anthropic, model {model} ({why})")
    base_url = settings.base_url or section.base_url or DEFAULT_OPENAI_BASE_URL
    model = settings.model_override or section.model or DEFAULT_OPENAI_MODEL
    return Check("provider", True, f"openai-compatible at {base_url}, model {model} ({why})")


async def _remote_live(settings: Settings, seconds: float) -> Check:
    """Does the configured remote provider answer? (The same check as `seam models`.)"""
    from seam.wiring.model_check import check_provider

    try:
        provider = ModelFactory(settings).provider(settings.provider)
    except ConfigError as exc:
        return Check("model endpoint", False, str(exc))
    try:
        ok, detail = await check_provider(provider, seconds)
    finally:
        await provider.aclose()
    if ok:
        return Check("model endpoint", True, f"{provider.name}:{provider.model} {detail}")
    key_env = (
        settings.config.anthropic.api_key_env
        if settings.provider == "anthropic"
        else settings.config.model.api_key_env
    )
    hint = f"check {key_env}" if "auth" in detail else "is the server running and reachable?"
    return Check("model endpoint", False, detail, hint)


def _local(settings: Settings) -> list[Check]:
    try:
        from seam.services.llm.llama_local import find_bundled_model, llama_cpp_available
    except ImportError as exc:
        return [Check("local model", False, f"the local provider cannot load: {exc}")]
    if not llama_cpp_available():
        return [Check("llama-cpp-python", False, "not importable", LOCAL_SETUP_HINT)]
    checks = [Check("llama-cpp-python", True, "importable")]
    configured = settings.config.local.model_path
    path = configured or find_bundled_model()
    if not path:
        checks.append(Check("local model", False, "no GGUF model found", LOCAL_SETUP_HINT))
        return checks
    if not Path(path).expanduser().is_file():
        hint = f"fix [local] model_path in {settings.config_path}"
        checks.append(Check("local model", False, f"{path} does not exist", hint))
        return checks
    checks.append(Check("local model", True, f"{path}"))
    return checks


async def _generate_one_token(settings: Settings) -> Check:
    started = time.perf_counter()
    try:
        provider = ModelFactory(settings).provider("local")
        try:
            request = ModelRequest(system="", messages=(Message("user", "Hi"),), max_tokens=1)
            async for _ in provider.stream(request):
                pass
        finally:
            await provider.aclose()
    except (ConfigError, ModelError) as exc:
        return Check("local generation", False, str(exc))
    return Check("local generation", True, f"1 token in {time.perf_counter() - started:.1f} s")


async def _store(settings: Settings) -> Check:
    """The store's line, as its backend checks it (`wiring/store_backends.py`)."""
    from seam.wiring.store_backends import backend_for, store_location

    where = store_location(settings)
    result = await backend_for(where.url).check(where)
    return Check("session store", result.ok, result.detail, result.hint)


BWRAP_HINT = (
    "install bubblewrap (scripts/start does it when run as root; or apt-get install"
    " bubblewrap), or set [sandbox] backend = 'local' to accept running unisolated"
)


def _sandbox(settings: Settings) -> Check:
    """Which sandbox backend commands run under, exactly as the runtime will pick it."""
    from seam.wiring.sandbox import build_sandboxes, describe_backend, sandbox_backend

    backend = sandbox_backend(build_sandboxes(settings))
    section = settings.config.sandbox
    detail = describe_backend(backend, section, None)
    if backend == "unavailable":
        return Check("sandbox", False, detail, BWRAP_HINT)
    return Check("sandbox", True, detail)


def _personalities(settings: Settings) -> list[Check]:
    from seam.plugins.personalities.files import FilePersonalityRegistry

    root = settings.personalities_dir
    default_id = settings.config.agent.personality
    if not root.is_dir() and default_id == "default":
        return [Check("personalities", True, f"{root} (the default one is written on first run)")]
    registry = FilePersonalityRegistry(str(root), default_id=default_id)
    found = ", ".join(p.id for p in registry.list()) or "none"
    try:
        registry.get(default_id)
    except KeyError as exc:
        hint = f"create {root / default_id / 'SOUL.md'} or change [agent] personality"
        checks = [Check("personalities", False, str(exc.args[0]), hint)]
    else:
        checks = [Check("personalities", True, f"{root}: {found}; the default is {default_id}")]
    for pid, problem in registry.errors().items():
        checks.append(Check(f"personality {pid}", False, problem, "fix the file it names"))
    return checks

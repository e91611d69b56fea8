"""A store backend the runtime can pick is its module plus one line: the toy backend
(`tests/conformance/toy_backend.py`, whose conformance run is one line in
`tests/conformance/backends.py`) registered with the `monkeypatch` line below (in the
source tree, one entry in `wiring/store_backends.py`) is chosen by its URL scheme for the
runtime's store, checked by `seam doctor`, and locks the gateway's adapters with a file
lock as it declares none of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.apps.doctor.diagnose import diagnose
from seam.contracts.events import Done
from seam.core.scripted_model import ScriptedModel, text_step
from seam.wiring import create_runtime, store_backends
from seam.wiring.gateway import FileLock, PostgresLock, adapter_lock
from seam.wiring.settings import ConfigError, load_settings
from tests.conformance.toy_backend import STORES, TOY_STORE, ToyStore

URL = "toy://house"


@pytest.fixture(autouse=True)
def toy_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        store_backends, "STORE_BACKENDS", (*store_backends.STORE_BACKENDS, TOY_STORE)
    )


async def test_the_runtime_keeps_its_sessions_in_the_backend_its_url_names(
    tmp_path: Path,
) -> None:
    env = {"SEAM_STORE_URL": URL}
    settings = load_settings(env, home=tmp_path / "home", working_dir=tmp_path)
    runtime = create_runtime(settings=settings, model=ScriptedModel([text_step("Hello.")]))
    try:
        assert isinstance(runtime.store, ToyStore) and runtime.store is STORES[URL]
        events = [event async for event in runtime.run("s", "hi")]
        assert isinstance(events[-1], Done) and events[-1].text == "Hello."
        [info] = await STORES[URL].list(10)
        assert info.key == runtime.session_key_for("s") and info.message_count == 2
    finally:
        await runtime.aclose()
        STORES.pop(URL, None)
    assert isinstance(adapter_lock(settings, "telegram"), FileLock)
    postgres = load_settings({"SEAM_STORE_URL": "postgresql://h/db"}, home=tmp_path / "home")
    assert isinstance(adapter_lock(postgres, "telegram"), PostgresLock)


async def test_doctor_checks_the_store_through_its_backend(tmp_path: Path) -> None:
    env = {"SEAM_STORE_URL": URL, "SEAM_HOME": str(tmp_path / "home")}
    checks = {check.name: check for check in (await diagnose(env)).checks}
    assert checks["session store"].ok
    assert checks["session store"].detail == f"toy store {URL} (0 sessions)"


def test_a_scheme_no_backend_takes_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_backends, "STORE_BACKENDS", store_backends.STORE_BACKENDS[:-1])
    with pytest.raises(ConfigError, match=r"^SEAM_STORE_URL must be a postgresql:// URL, got "):
        load_settings({"SEAM_STORE_URL": URL}, home=tmp_path / "home")

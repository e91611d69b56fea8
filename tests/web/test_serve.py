"""`seam serve` and `seam keys` as a person runs them: subprocesses on loopback, and the
whole API fuzzed from its own /openapi.json with schemathesis."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

SEAM = [str(Path(sys.executable).with_name("seam"))]


def env_for(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SEAM_HOME"] = str(home)
    # A model endpoint nobody listens on: turns fail fast, nothing is downloaded or loaded.
    env["OPENAI_BASE_URL"] = "http://127.0.0.1:9/v1"
    env["OPENAI_API_KEY"] = "unused"
    return env


def seam(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SEAM, *args], env=env_for(home), capture_output=True, text=True, timeout=60
    )


@contextmanager
def serve(home: Path, *args: str) -> Iterator[tuple[str, str]]:
    """A running `seam serve`; yields its base URL and the login URL it printed."""
    proc = subprocess.Popen(
        [*SEAM, "serve", "--port", "0", *args],
        env=env_for(home),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        login = proc.stdout.readline()
        assert first.startswith("seam serve: listening on "), first + proc.stderr.read()
        yield first.split()[-1].rstrip("/"), login.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def test_keys_are_created_once_listed_and_revoked(tmp_path: Path) -> None:
    made = seam(tmp_path, "keys", "create", "laptop", "--tenant", "alice")
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("seam_") and "not shown again" in made.stderr
    stored = (tmp_path / "keys.json").read_text()
    assert key not in stored and "alice" in stored
    listed = seam(tmp_path, "keys", "list")
    assert "laptop" in listed.stdout and "tenant=alice" in listed.stdout
    assert key not in listed.stdout
    assert seam(tmp_path, "keys", "create", "laptop").returncode == 2
    assert seam(tmp_path, "keys", "revoke", "laptop").returncode == 0
    assert seam(tmp_path, "keys", "revoke", "laptop").returncode == 1


def test_keys_have_a_scope_shown_in_the_list(tmp_path: Path) -> None:
    made = seam(tmp_path, "keys", "create", "phone", "--tenant", "bob", "--scope", "chat")
    assert made.returncode == 0, made.stderr
    assert "scope chat" in made.stderr
    assert seam(tmp_path, "keys", "create", "mine").returncode == 0
    listed = seam(tmp_path, "keys", "list").stdout
    assert "phone\ttenant=bob\tscope=chat" in listed
    assert "mine\ttenant=local\tscope=full" in listed
    bad = seam(tmp_path, "keys", "create", "x", "--scope", "admin")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "full, chat, read" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_a_public_address_without_any_key_is_refused(tmp_path: Path) -> None:
    refused = seam(tmp_path, "serve", "--host", "0.0.0.0", "--port", "0")
    assert refused.returncode == 2
    assert "no API key exists" in refused.stderr and "seam keys create" in refused.stderr


def test_serve_prints_a_login_url_and_keys_open_the_api(tmp_path: Path) -> None:
    key = seam(tmp_path, "keys", "create", "cli").stdout.strip()
    with serve(tmp_path) as (url, login):
        assert login.startswith(url + "/?token=")
        assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
        assert httpx.get(f"{url}/api/sessions").status_code == 401
        ok = httpx.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {key}"})
        assert ok.status_code == 200
        with httpx.Client(follow_redirects=True) as browser:
            assert browser.get(login).status_code == 200  # redirected to the page
            assert browser.get(f"{url}/api/personalities").status_code == 200
        assert httpx.get(login).status_code == 401  # the link works once
        seam(tmp_path, "keys", "revoke", "cli")
        gone = httpx.get(f"{url}/api/sessions", headers={"Authorization": f"Bearer {key}"})
        assert gone.status_code == 401


def test_schemathesis_finds_no_server_error(tmp_path: Path) -> None:
    key = seam(tmp_path, "keys", "create", "fuzz").stdout.strip()
    with serve(tmp_path) as (url, _):
        run = subprocess.run(
            [
                str(Path(sys.executable).parent / "st"),
                "run",
                f"{url}/openapi.json",
                "--header",
                f"Authorization: Bearer {key}",
                "--checks",
                "not_a_server_error",
                "--max-examples",
                "15",
                "--phases",
                "examples,coverage,fuzzing",
                # The event stream never ends by design; it is tested on its own.
                "--exclude-path-regex",
                "/events$",
                "--request-timeout",
                "20",
                "--workers",
                "1",
            ],
            capture_output=True,
            text=True,
            timeout=280,
            env={**os.environ, "NO_COLOR": "1"},
            cwd=tmp_path,  # its cache folder lands here, not in the checkout
        )
        assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]

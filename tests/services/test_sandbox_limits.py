"""Limits, leftovers, secrets and git control files, on real processes and real bubblewrap.

Runs as whoever runs the suite (root in CI): the process cap then comes from the pids
cgroup (RLIMIT_NPROC never binds uid 0), the memory cap from the memory cgroup. Where
this process cannot create cgroups the memory and fork tests skip and say so; the file
size and CPU limits (rlimits) hold everywhere.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import time
from pathlib import Path

import pytest

from seam.contracts.sandbox import SandboxError
from seam.contracts.storage import Reach
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, BwrapSandbox, bwrap_available
from seam.services.sandbox.cgroups import shared_cgroups
from seam.services.sandbox.limits import Limits
from seam.services.sandbox.local import LocalSandbox
from seam.services.sandbox.process import GroupSandbox, SandboxOptions
from tests.services.test_sandbox_bwrap import PYTHON_PREFIX
from tests.services.test_sandbox_local import TEST_PATH, dead, pids_running

BWRAP = Path(DEFAULT_BWRAP).exists() and bwrap_available()
CONTROLLERS = shared_cgroups().controllers
needs_memory_cgroup = pytest.mark.skipif(
    "memory" not in CONTROLLERS, reason="this process cannot create a memory cgroup"
)
needs_pids_cgroup = pytest.mark.skipif(
    "pids" not in CONTROLLERS and os.geteuid() == 0,
    reason="root without a pids cgroup: RLIMIT_NPROC does not bind uid 0",
)
SMALL = Limits(memory_mb=64, max_processes=24, max_file_mb=1, cpu_seconds=1)
BACKENDS = ["local", pytest.param("bwrap", marks=pytest.mark.skipif(not BWRAP, reason="no bwrap"))]


def make(backend: str, work: Path, limits: Limits = SMALL, **env: str) -> GroupSandbox:
    options = SandboxOptions(kill_grace=0.5, timeout=20, limits=limits)
    base = {"PATH": TEST_PATH, **env}
    if backend == "local":
        return LocalSandbox(str(work), base_env=base, options=options)
    reach = Reach(read=(str(work), PYTHON_PREFIX), write=(str(work),))
    return BwrapSandbox(str(work), base_env=base, options=options, reach=reach)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


@needs_memory_cgroup
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_memory_hog_is_killed_with_a_named_limit_and_the_next_call_runs(
    backend: str, work: Path
) -> None:
    sandbox = make(backend, work)
    hog = "python3 -c 'x = bytearray(10**9); print(len(x))'"
    with pytest.raises(SandboxError) as raised:
        await sandbox.run(hog)
    first = str(raised.value).splitlines()[0]
    assert first == "killed: exceeded the sandbox memory limit (64 MB; [sandbox] memory_mb)"
    assert (await sandbox.run("echo still here")).output == "still here\n"
    await sandbox.aclose()


@needs_pids_cgroup
@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_fork_loop_ends_at_the_process_cap_not_the_timeout(
    backend: str, work: Path
) -> None:
    sandbox = make(backend, work)
    token = f"4{secrets.randbelow(10**6)}.5"
    started = time.monotonic()
    with pytest.raises(SandboxError, match=r"process limit \(24 processes; \[sandbox\] max"):
        await sandbox.run(f"while true; do sleep {token} & done")
    assert time.monotonic() - started < 10  # the timeout is 20 s
    assert pids_running(f"sleep {token}") == []
    assert (await sandbox.run("echo ok")).output == "ok\n"
    await sandbox.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_file_size_and_cpu_time_limits_name_their_keys(backend: str, work: Path) -> None:
    sandbox = make(backend, work)
    with pytest.raises(SandboxError, match=r"file size limit \(1 MB; \[sandbox\] max_file_mb\)"):
        await sandbox.run("head -c 3000000 /dev/zero > big")
    assert (work / "big").stat().st_size == 1024 * 1024
    with pytest.raises(SandboxError, match=r"CPU time limit \(1 s; \[sandbox\] cpu_seconds\)"):
        await sandbox.run("python3 -c 'while True: pass'")
    await sandbox.aclose()


@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_process_of_a_call_ends_with_it(backend: str, work: Path) -> None:
    if backend == "local" and not shared_cgroups().bases:
        pytest.skip("no cgroup here: a setsid daemon leaves the local backend's reach")
    sandbox = make(backend, work, Limits())
    token = f"5{secrets.randbelow(10**6)}.5"
    daemon = f"setsid sh -c 'sleep {token} & sleep {token}1 &' > /dev/null 2>&1 < /dev/null"
    result = await sandbox.run(f"sleep {token}2 & {daemon}; echo started")
    assert result.output.startswith("started")
    await dead(*pids_running(f"sleep {token}"))  # all three, whatever group or session
    await sandbox.aclose()


@pytest.mark.skipif(not BWRAP, reason="no bwrap")
async def test_no_provider_key_inside_bubblewrap(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = f"sk-canary-{secrets.token_hex(8)}"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    monkeypatch.setenv("SEAM_TEST_CANARY", canary)
    sandbox = make("bwrap", work, Limits(), **os.environ)
    script = "env; cat /proc/1/environ; cat /proc/$PPID/environ; ps eww; ps -eo pid,args; echo done"
    result = await sandbox.run(script)
    assert result.output.rstrip().endswith("done")
    assert canary not in result.output
    assert "PATH=" in result.output  # `env` did print
    await sandbox.aclose()


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.mark.skipif(not BWRAP, reason="no bwrap")
async def test_git_hooks_and_config_are_read_only_unless_allowed(work: Path) -> None:
    git("init", "-q", ".", cwd=work)
    nested = work / "vendor"
    nested.mkdir()
    git("init", "-q", ".", cwd=nested)
    sandbox = make("bwrap", work, Limits())
    for command in (
        "echo evil > .git/hooks/pre-commit",
        "git config core.fsmonitor evil",
        "echo '[core]' >> vendor/.git/config",
        "rm -rf .git/hooks",
    ):
        result = await sandbox.run(command)
        assert result.exit_code != 0, command
    assert not (work / ".git/hooks/pre-commit").exists()
    assert "evil" not in (work / ".git/config").read_text()
    assert "[core]\n[core]" not in (nested / ".git/config").read_text()
    # Everything else in .git stays writable: git itself works.
    result = await sandbox.run("echo a > a && git add a && git status --short a")
    assert result.output == "A  a\n"
    allowed = await sandbox.run("git config core.editor vi", allow_git_control_writes=True)
    assert allowed.exit_code == 0
    assert "editor = vi" in (work / ".git/config").read_text()
    await sandbox.aclose()


@pytest.mark.skipif(not BWRAP, reason="no bwrap")
async def test_skills_are_read_only_and_the_rest_of_seam_home_is_absent(tmp_path: Path) -> None:
    seam_home = tmp_path / "seam"
    (seam_home / "skills/hello").mkdir(parents=True)
    (seam_home / "skills/hello/run.sh").write_text("echo hello from a skill\n")
    (seam_home / "config.toml").write_text("secret = 'canary-config'\n")
    work = seam_home.parent / "work"
    work.mkdir()
    reach = Reach(read=(str(work),), write=(str(work),), deny=(str(seam_home),))
    sandbox = BwrapSandbox(
        str(work),
        base_env={"PATH": TEST_PATH},
        reach=reach,
        read_only=(str(seam_home / "skills"),),
    )
    result = await sandbox.run(f"sh {seam_home}/skills/hello/run.sh")
    assert result.output == "hello from a skill\n"
    result = await sandbox.run(f"cat {seam_home}/config.toml; touch {seam_home}/skills/x")
    assert "canary-config" not in result.output and result.exit_code != 0
    assert not (seam_home / "skills/x").exists()
    await sandbox.aclose()


async def test_limits_off_and_cgroups_cleaned_up(work: Path) -> None:
    sandbox = make("local", work, Limits(0, 0, 0, 0))
    result = await sandbox.run("ulimit -f; ulimit -t")
    assert result.output == "unlimited\nunlimited\n"
    sandbox = make("local", work)
    await sandbox.run("true")
    await sandbox.run("true")  # the first call's cgroup again, emptied and reused
    shared_cgroups().clear()
    mine = f"seam-{os.getpid()}-"
    leftover = [
        path
        for base in shared_cgroups().bases
        for path in base.iterdir()
        if path.name.startswith(mine)
    ]
    assert leftover == []
    await sandbox.aclose()

"""What the chaos suite breaks besides the model: worker processes (SIGKILL), a
PostgreSQL server of its own (restarted mid-run) and a small disk (filled, then freed)."""

from __future__ import annotations

import contextlib
import errno
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

PG_BIN = Path("/usr/lib/postgresql/15/bin")


class Workers:
    """`count` `seam worker` processes; a killed or exited one is started again."""

    def __init__(
        self, command: list[str], cwd: Path, env: Mapping[str, str], logs: Path, count: int
    ) -> None:
        self.command = command
        self.cwd = cwd
        self.env = dict(env)
        self.logs = logs
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * count
        self.kills = 0
        self.exits: list[int] = []  # exit codes of workers that stopped on their own
        self._started = 0
        logs.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        for index in range(len(self.processes)):
            self._spawn(index)

    def _spawn(self, index: int) -> None:
        self._started += 1
        log = (self.logs / f"worker-{self._started}.log").open("wb")
        with log:
            self.processes[index] = subprocess.Popen(
                self.command,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    def kill_one(self, rng: random.Random) -> None:
        """SIGKILL a random live worker and start another in its place."""
        index = rng.randrange(len(self.processes))
        process = self.processes[index]
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            self.kills += 1
        self._spawn(index)

    def reap(self) -> None:
        """Start again any worker that exited on its own (and remember its exit code)."""
        for index, process in enumerate(self.processes):
            if process is not None and process.poll() is not None:
                self.exits.append(process.returncode)
                self._spawn(index)

    def stop(self) -> None:
        for process in self.processes:
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            if process is None:
                continue
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def count_lines(self, needle: str, *more: Path) -> int:
        """Lines of the workers' output (and of the `more` log folders) containing
        `needle`, case-insensitive."""
        paths = [*self.logs.glob("worker-*.log")]
        for folder in more:
            paths += [p for p in folder.glob("*") if p.is_file()] if folder.is_dir() else []
        return sum(
            needle in line.lower()
            for path in paths
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        )

    def tail(self, lines: int = 30) -> str:
        """The end of every worker's log, for a failure message: those that met errors,
        and the quiet ones too (a worker stalled holding a lease may have said nothing)."""
        out = []
        for path in sorted(self.logs.glob("worker-*.log")):
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()
            out.append(f"--- {path.name}\n" + "\n".join(text[:1] + text[1:][-lines:]))
        return "\n".join(out)


class SmallDisk:
    """A tmpfs of `megabytes` at `path`; `fill()` writes until it is full, `free()` empties
    it again. Needs root (mount); `available()` says whether mounting works here."""

    def __init__(self, path: Path, megabytes: int = 48) -> None:
        self.path = path
        self.megabytes = megabytes
        self.mounted = False
        self._filler = path / "filler.bin"

    def mount(self) -> bool:
        self.path.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={self.megabytes}m", "tmpfs", str(self.path)],
            capture_output=True,
            check=False,
        )
        self.mounted = done.returncode == 0
        return self.mounted

    def fill(self) -> None:
        """Write until the disk refuses even a small block: nothing at all is left."""
        fd = os.open(self._filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for size in (1 << 20, 4096, 512):
                block = b"\0" * size
                try:
                    while True:
                        os.write(fd, block)
                except OSError as exc:
                    if exc.errno != errno.ENOSPC:
                        raise
        finally:
            os.close(fd)

    def free(self) -> None:
        self._filler.unlink(missing_ok=True)

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)
            self.mounted = False


def pg_available() -> str | None:
    """Why a throwaway PostgreSQL server cannot be started here, or None."""
    if not (PG_BIN / "initdb").exists():
        return f"no PostgreSQL 15 binaries in {PG_BIN} (scripts/ensure-postgres installs them)"
    if os.geteuid() != 0:
        return "starting a throwaway PostgreSQL server as the postgres user needs root"
    return None


class ThrowawayPostgres:
    """A PostgreSQL cluster of the suite's own (initdb in a temporary directory, its own
    port), so restarting it mid-run disturbs no one else's tests."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="seam-chaos-pg-"))
        shutil.chown(self.dir, "postgres", "postgres")
        self.data = self.dir / "data"
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = int(probe.getsockname()[1])
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.restarts = 0

    def _as_postgres(self, *args: str) -> None:
        subprocess.run(
            ["runuser", "-u", "postgres", "--", *args],
            check=True,
            capture_output=True,
            cwd=self.dir,
            timeout=120,
        )

    def start(self) -> None:
        self._as_postgres(
            str(PG_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"
        )
        self._pg_ctl("start")

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_postgres(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.dir / "server.log"),
            "-o",
            options,
            "-w",
            *extra,
            action,
        )

    def restart(self) -> None:
        """Stop the server the hard way (as a crash would: crash recovery on start)."""
        self._pg_ctl("restart", "-m", "immediate")
        self.restarts += 1

    def stop(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
            self._pg_ctl("stop", "-m", "fast")
        shutil.rmtree(self.dir, ignore_errors=True)


@contextlib.contextmanager
def throwaway_postgres() -> Iterator[ThrowawayPostgres]:
    server = ThrowawayPostgres()
    try:
        server.start()
        yield server
    finally:
        server.stop()


def wait_until(deadline: float) -> bool:
    """Whether there is still time (a poll loop's guard)."""
    return time.monotonic() < deadline

"""Scoped paths: whatever path a tool is handed (`..`, absolute, doubled slashes, links
out of the working directory), `ScopedStorage` over the real file system reads and
writes only inside the session's reach."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from seam.contracts.storage import StorageError
from seam.core.storage import ScopedStorage
from seam.services.storage.fs import FsStorage

SECRET = "the secret outside the reach"


@pytest.fixture(scope="module")
def tree() -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder).resolve()
        (root / "work" / "sub").mkdir(parents=True)
        (root / "work" / "notes.txt").write_text("inside")
        (root / "outside").mkdir()
        (root / "outside" / "secret.txt").write_text(SECRET)
        (root / "work" / "link").symlink_to(root / "outside")
        (root / "work" / "sub" / "up").symlink_to("../..")
        (root / "work" / "file-link").symlink_to(root / "outside" / "secret.txt")
        yield root


segments = st.sampled_from(
    ["..", ".", "", "work", "outside", "secret.txt", "notes.txt", "sub", "up", "link",
     "file-link", "new.txt", "~", "$HOME", "a b", "\\", "..."]
)  # fmt: skip
paths = st.builds(
    lambda absolute, parts: ("/" if absolute else "") + "/".join(parts),
    st.booleans(),
    st.lists(segments, min_size=1, max_size=6),
)


def _outside_files(root: Path) -> dict[str, str]:
    found = {}
    for folder, _dirs, files in os.walk(root):
        if Path(folder).is_relative_to(root / "work"):
            continue
        for name in files:
            found[os.path.join(folder, name)] = Path(folder, name).read_text()
    return found


@given(paths, st.booleans())
@example("link/secret.txt", False)
@example("sub/up/outside/secret.txt", False)
@example("file-link", True)
@example("../outside/new.txt", True)
def test_no_path_reaches_outside_the_working_directory(
    tree: Path, path: str, absolute_root: bool
) -> None:
    if absolute_root and not path.startswith("/"):
        path = str(tree / "work" / path)
    elif path.startswith("/"):
        path = str(tree) + path
    storage = ScopedStorage(FsStorage(), working_dir=str(tree / "work"))
    before = _outside_files(tree)

    async def attempt() -> None:
        try:
            text = await storage.read_text(path)
            assert SECRET not in text, path
        except StorageError:
            pass
        with contextlib.suppress(StorageError):
            await storage.write_text(path, "written")
        try:
            await storage.list_dir(path)
            # Listed: then it really is a folder inside the working directory.
            assert Path(storage.resolve(path)).is_relative_to(tree / "work"), path
        except StorageError:
            pass

    asyncio.run(attempt())
    assert _outside_files(tree) == before, path
    assert not storage.reach.readable(storage.resolve(str(tree / "outside")))

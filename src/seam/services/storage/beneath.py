"""Opening a path beneath a directory descriptor, following no symlink on the way.

A path checked by name and then opened by name can change in between: a process in the
sandbox that swaps a symlink in at that moment makes the open land outside the reach. So
the file tools resolve a path first (`real_path`, symlinks followed the way the kernel
would, each hop counted), check that result against the reach, and then open exactly
that symlink-free path relative to a descriptor of the reach root that holds it, refusing
any symlink met on the way. A swap after the check then fails the open (`ELOOP`), and the
caller resolves and checks again; it never reads or writes through the swapped link.

The open is one `openat2(2)` with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS` (Linux 5.6+;
Python has no binding, so it goes through `syscall(2)` with ctypes). Where the kernel
lacks it (`ENOSYS`) or a seccomp filter blocks it (`EPERM`), the same rule is walked by
hand: `O_NOFOLLOW` per component, each one opened relative to the previous directory.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import platform
import stat
from collections.abc import Callable

SYS_OPENAT2 = 437  # the same number on x86_64 and aarch64 (the unified syscall table)
_OPENAT2_MACHINES = frozenset({"x86_64", "aarch64", "arm64"})
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
MAX_SYMLINKS = 40  # hops `real_path` follows before it gives up, as the kernel does
# A symlink where the resolved path had none, or a rename seen mid-lookup: the path
# changed after it was checked.
CHANGED_ERRNOS = frozenset({errno.ELOOP, errno.EXDEV, errno.EAGAIN})
_DIR_PATH = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


def _load_syscall() -> ctypes._NamedFuncPointer | None:
    if platform.machine() not in _OPENAT2_MACHINES:
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).syscall
    except (OSError, AttributeError):
        return None
    function.restype = ctypes.c_long
    return function


_SYSCALL = _load_syscall()


def sys_openat2(dir_fd: int, path: str, flags: int, mode: int = 0) -> int:
    """`openat2(dir_fd, path)` beneath `dir_fd` with no symlink (and no magic link) followed.

    Raises OSError like `os.open`; `ENOSYS` where the kernel or machine lacks the call."""
    if _SYSCALL is None:
        raise OSError(errno.ENOSYS, os.strerror(errno.ENOSYS), path)
    how = _OpenHow(flags, mode, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)
    fd = _SYSCALL(
        ctypes.c_long(SYS_OPENAT2),
        ctypes.c_int(dir_fd),
        ctypes.c_char_p(os.fsencode(path)),
        ctypes.byref(how),
        ctypes.c_size_t(ctypes.sizeof(how)),
    )
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


def real_path(path: str) -> str:
    """Where an absolute `path` really points: `.`/`..` folded, symlinks followed (at most
    `MAX_SYMLINKS`), a missing tail kept as written. Like `os.path.realpath`, but a path
    that changes while it is read never raises: the open that follows will catch it."""
    pending = path.split("/")[::-1]
    done = ""
    hops = 0
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            done = done.rpartition("/")[0]
            continue
        here = f"{done}/{name}"
        try:
            target = os.readlink(here)  # noqa: PTH115 - a str path; no Path per component
        except OSError:  # not a link, missing, or under a file: a component as written
            done = here
            continue
        hops += 1
        if hops > MAX_SYMLINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), path)
        if target.startswith("/"):
            done = ""
        pending.extend(target.split("/")[::-1])
    return done or "/"


OpenAt2 = Callable[[int, str, int, int], int]


class Opener:
    """Opens relative paths beneath a root descriptor; `openat2` decides how (None: use
    it when the kernel has it, False: always the `O_NOFOLLOW` walk). `call` stands in for
    the syscall (a test's kernel that answers ENOSYS or EPERM)."""

    def __init__(self, openat2: bool | None = None, *, call: OpenAt2 | None = None) -> None:
        self.openat2 = openat2 is not False and (call is not None or _SYSCALL is not None)
        self._openat2: OpenAt2 = call or sys_openat2

    def open(self, root_fd: int, rel: str, flags: int, mode: int = 0) -> int:
        """An fd for `rel` (no `..`, no leading `/`) under `root_fd`; ELOOP on any symlink,
        EXDEV on a `..` (both mean: not the path that was checked)."""
        if ".." in rel.split("/"):
            raise OSError(errno.EXDEV, "'..' is not allowed beneath a root", rel)
        flags |= os.O_CLOEXEC
        if self.openat2:
            try:
                return self._openat2(root_fd, rel or ".", flags, mode)
            except OSError as exc:
                if exc.errno not in (errno.ENOSYS, errno.EPERM):
                    raise
                self.openat2 = False  # this kernel (or its seccomp filter) says no
        return self._walk(root_fd, rel, flags, mode)

    def _walk(self, root_fd: int, rel: str, flags: int, mode: int) -> int:
        parts = [p for p in rel.split("/") if p]
        if not parts:
            return os.open(".", flags, mode, dir_fd=root_fd)
        fd = root_fd
        try:
            for part in parts[:-1]:
                fd = _step(fd, part, root_fd)
            found = _open_last(fd, parts[-1], flags, mode)
        finally:
            if fd != root_fd:
                os.close(fd)
        if flags & os.O_PATH and stat.S_ISLNK(os.fstat(found).st_mode):
            os.close(found)  # O_PATH|O_NOFOLLOW opens the link itself: refuse it the same
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel)
        return found

    def open_dir(self, root_fd: int, rel: str, *, create: bool = False) -> int:
        """An `O_PATH` fd of the directory `rel`; with `create`, missing ones are made,
        one component at a time beneath the previous descriptor."""
        try:
            return self.open(root_fd, rel, _DIR_PATH)
        except FileNotFoundError:
            if not create:
                raise
        # `open` refused any `..` above: only a missing directory gets here.
        fd = os.dup(root_fd)
        try:
            for part in (p for p in rel.split("/") if p):
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                fd = _step(fd, part, -1)
        except BaseException:
            os.close(fd)
            raise
        return fd


def _open_last(fd: int, name: str, flags: int, mode: int) -> int:
    """`name` under `fd` with O_NOFOLLOW; a link met with O_DIRECTORY says ENOTDIR, made
    ELOOP here like every other link, so the caller knows the path changed."""
    try:
        return os.open(name, flags | os.O_NOFOLLOW, mode, dir_fd=fd)
    except NotADirectoryError:
        if stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode):
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), name) from None
        raise


def _step(fd: int, part: str, keep: int) -> int:
    """The directory `part` under `fd`, which is closed unless it is `keep` (on success
    only: on failure the caller still owns it). ELOOP if `part` is a link."""
    found = os.open(part, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd)
    kind = os.fstat(found).st_mode
    if not stat.S_ISDIR(kind):
        os.close(found)
        code = errno.ELOOP if stat.S_ISLNK(kind) else errno.ENOTDIR
        raise OSError(code, os.strerror(code), part)
    if fd != keep:
        os.close(fd)
    return found


def open_root(root: str) -> int:
    """An `O_PATH` fd of a reach root (canonical, so not itself a link)."""
    return os.open(root, _DIR_PATH | os.O_NOFOLLOW)

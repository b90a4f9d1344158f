"""Files opx writes for a user (`export -o`): only regular files are written or replaced, and
atomically. The bytes go to a temporary file in the target's folder, are flushed to the disk
(fsync), then renamed over the target (os.replace), so a reader sees the old file or the new one,
never half of either; on any failure the temporary file is removed. A target that exists and is
not a regular file (a folder, a device such as /dev/full, a FIFO) or is a symbolic link is
refused, never replaced. Every refusal is an `OutputError`: `error: <path>: <what is wrong>`."""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from opx.errors import OutputError

_KIND = ((stat.S_ISDIR, "is a folder"), (stat.S_ISCHR, "is a device"),
         (stat.S_ISBLK, "is a device"), (stat.S_ISFIFO, "is a pipe (FIFO)"),
         (stat.S_ISSOCK, "is a socket"))


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _too_long(name: str, limit: int | None = None) -> OutputError:
    size = len(os.fsencode(Path(name).name))
    return OutputError(name, f"the file name is too long ({size} bytes"
                             + (f"; this folder allows at most {limit})" if limit else ")"))


def check_target(name: str) -> Path:
    """The path to write `name` to, or an OutputError saying why opx will not write there: an
    empty name, a symbolic link, something other than a regular file, a missing folder, a name
    too long for its folder. (`write_file` checks again when it writes.)"""
    if not name:
        raise OutputError(name, "no file name given")
    path = Path(name)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:          # a file used as a folder, a name too long, no permission
        if exc.errno == errno.ENAMETOOLONG:
            raise _too_long(name) from None
        raise OutputError(name, f"cannot be written: {_why(exc)}") from None
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise OutputError(name, "is a symbolic link: opx writes only regular files and does "
                                    "not replace links; name the file itself")
        for test, what in _KIND:
            if test(st.st_mode):
                raise OutputError(name, f"{what}, not a regular file: opx writes only regular "
                                        f"files; name a file")
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(name, "is not a regular file: opx writes only regular files")
        if not os.access(path, os.W_OK):
            raise OutputError(name, "is read-only: opx does not replace it")
    folder = path.parent
    if not folder.is_dir():
        raise OutputError(name, f"the folder {folder} does not exist: create it first"
                          if not folder.exists() else f"{folder} is not a folder")
    with contextlib.suppress(OSError, ValueError):
        limit = os.pathconf(folder, "PC_NAME_MAX")
        if len(os.fsencode(path.name)) > limit:
            raise _too_long(name, limit)
    return path


def write_file(name: str, data: bytes) -> Path:
    """Write `data` to `name` as described above; returns the path written."""
    path = check_target(name)
    folder = path.parent
    tmp = None
    try:
        for _ in range(100):
            candidate = folder / f".opx-{secrets.token_hex(6)}.part"
            try:
                # 0o666 less the umask, as any new file gets; O_EXCL: never an existing name
                fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL
                             | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o666)
            except FileExistsError:
                continue
            except OSError as exc:
                raise OutputError(name, f"cannot create a file in the folder {folder}: "
                                        f"{_why(exc)}") from None
            tmp = candidate
            break
        else:
            raise OutputError(name, f"cannot create a temporary file in {folder}")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        with contextlib.suppress(FileNotFoundError):
            mode = os.lstat(path).st_mode
            if stat.S_ISREG(mode):
                os.chmod(tmp, stat.S_IMODE(mode))   # a replaced file keeps its permissions
        check_target(name)          # still a regular file, or nothing, just before the rename
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise OutputError(name, f"cannot be written: {_why(exc)}") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    with contextlib.suppress(OSError):  # the rename itself on the disk (POSIX folders)
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    return path

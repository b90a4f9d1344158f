"""A throwaway PostgreSQL cluster from Debian's package, for the tests, the benchmarks and the
replica demo: `initdb` in a temporary folder, `pg_ctl` on a free 127.0.0.1 port, run as the
`postgres` user when this process is root (PostgreSQL refuses to run as root), stopped and
removed on exit.

    with Cluster() as pg:            # or Cluster.start_new()
        url = pg.url                 # postgresql://postgres@127.0.0.1:PORT/opx
        pg.stop(); pg.start()        # the same data on the same port (fault tests)

`unavailable()` says why a cluster cannot be started here (no server binaries), or None.
Each cluster's folder names the process that owns it (`owner.pid`); `remove_leftovers()` stops
and removes the clusters whose owner is gone (killed before it could stop them), so the demo's
next start cleans up after a killed one.
"""
from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

DATABASE = "opx"
PREFIX = "opx-pg-"
OWNER_FILE = "owner.pid"


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"),
                   key=lambda p: int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0)
    return Path(found[-1]).parent if found else None


def unavailable() -> str | None:
    """Why no cluster can be started on this machine, or None when one can."""
    if _bin_dir() is None:
        return ("PostgreSQL's server is not installed (no /usr/lib/postgresql/*/bin/pg_ctl; "
                "`apt-get install postgresql`, as .ci/run does)")
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root, and there is no `postgres` user to run the server as"
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                 # someone else's process: alive
        return True
    return True


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    def __init__(self, port: int | None = None):
        reason = unavailable()
        if reason:
            raise RuntimeError(reason)
        self.bin = _bin_dir()
        self.port = port or free_port()
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX))
        (self.root / OWNER_FILE).write_text(f"{os.getpid()}\n")
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8")
        self.running = False

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def server(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / tool), *args]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        return subprocess.run(cmd, check=check, capture_output=True, text=True, cwd=self.root)

    def start(self) -> "Cluster":
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                  "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 "
                        f"-c fsync=off -c max_connections=200", "start")
        self.running = True
        if not self._database_exists():
            self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                      DATABASE)
        return self

    def _database_exists(self) -> bool:
        out = self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-At",
                        "-c", f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'",
                        check=False)
        return out.stdout.strip() == "1"

    def stop(self, mode: str = "fast") -> None:
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop", check=False)
            self.running = False

    def psql(self, sql: str) -> str:
        return self._run("psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-At",
                         "-d", DATABASE, "-c", sql).stdout

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)

    @classmethod
    def leftovers(cls) -> list[Path]:
        """The folders of clusters whose owning process is gone."""
        found = []
        for root in sorted(Path(tempfile.gettempdir()).glob(PREFIX + "*")):
            try:
                owner = int((root / OWNER_FILE).read_text().strip())
            except (OSError, ValueError):
                continue                    # not one this module made, or still being made
            if not _alive(owner):
                found.append(root)
        return found

    @classmethod
    def remove_leftovers(cls) -> list[Path]:
        """Stop and remove every cluster whose owner is gone; returns their folders."""
        removed = []
        for root in cls.leftovers():
            left = cls.__new__(cls)
            left.bin, left.root, left.data = _bin_dir(), root, root / "data"
            left.port, left.log, left.running = 0, root / "server.log", True
            left._as_postgres = os.geteuid() == 0
            left.remove()
            removed.append(root)
        return removed

    @classmethod
    def start_new(cls) -> "Cluster":
        return cls().start()

    def __enter__(self) -> "Cluster":
        return self.start() if not self.running else self

    def __exit__(self, *exc) -> None:
        with contextlib.suppress(Exception):
            self.remove()

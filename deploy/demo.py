"""Several opx replicas behind nginx, over one database, on this machine.

    .venv/bin/python deploy/demo.py [--replicas N] [--port P] [--db URL]

Without --db it starts a throwaway PostgreSQL cluster (deploy/pgcluster.py); --db takes a
PostgreSQL URL or a DuckDB file (several replicas can read one file). It builds the database
with `python -m opx db init`, starts N Streamlit replicas on free ports, renders
deploy/nginx.conf.template into a temporary prefix, runs nginx in front of them with sticky
sessions, and stops everything on Ctrl-C (SIGINT or SIGTERM).

From Python (the browser tests):

    with Demo(replicas=2, db=url) as demo:
        demo.proxy_url                  # http://127.0.0.1:PORT
        demo.replicas[0].port           # each with .name, .port, .url, .process
        demo.kill(0)                    # SIGKILL a replica; demo.restart(0) starts it again
        demo.access_log()               # nginx's lines, parsed: which replica served what
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import grp
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:          # run as a script: `deploy.pgcluster` must be importable
    sys.path.insert(0, str(ROOT))

from deploy import pgcluster  # noqa: E402

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/bin/nginx")
STICKY_COOKIE = "opx_replica"
DEFAULT_PROXY_PORT = 8500
REPLICA_START_SECONDS = 90.0
STOP_SECONDS = 10.0
# A replica that failed once is not tried again for this long (nginx's fail_timeout).
FAIL_TIMEOUT = "10s"


def nginx_binary() -> Path | None:
    found = shutil.which("nginx")
    for candidate in ([found] if found else []) + list(NGINX_CANDIDATES):
        if candidate and os.access(candidate, os.X_OK):
            return Path(candidate)
    return None


def nginx_unavailable() -> str | None:
    """Why nginx cannot be run here, or None."""
    if nginx_binary() is None:
        return "nginx is not installed (no nginx on PATH nor /usr/sbin/nginx; `apt-get install nginx`)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: its own process group (so one killpg stops it and whatever it
    starts, and a Ctrl-C in the terminal reaches only the demo, which stops things in order),
    and SIGTERM when the demo dies, even by SIGKILL, so no replica or nginx is left behind.
    (Linux sends that signal when the starting *thread* ends: start a Demo from a thread that
    outlives it, e.g. the main one.)"""
    os.setsid()
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)   # PR_SET_PDEATHSIG


def _answers_health(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
            return response.read() == b"ok"
    except OSError:
        return False


def _stop_group(process: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    """Signal the process's group, wait, and SIGKILL the group if it has not gone."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, sig)
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextlib.contextmanager
def _signals_held():
    """SIGINT and SIGTERM ignored meanwhile (only the main thread may change handlers)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _tail(path: Path, chars: int = 3000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


@dataclass
class Replica:
    name: str                       # r0, r1, ...: the value of the sticky cookie
    port: int
    process: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def address(self) -> str:       # as nginx writes it in $upstream_addr
        return f"127.0.0.1:{self.port}"


@dataclass
class LogEntry:
    """One request as nginx's access log tells it (log_format opx_replicas)."""
    method: str
    path: str
    status: int
    tried: list[str]                # upstream addresses in the order tried; the last answered
    pinned: str                     # the sticky cookie the browser sent ('' on a first visit)
    served: str                     # the replica that answered (r0, ...), '' if none did
    user_agent: str

    @property
    def kind(self) -> str:
        if self.path.startswith("/_stcore/stream"):
            return "websocket"
        if self.path.startswith("/media/"):
            return "media"
        if self.path.startswith("/_stcore/upload_file"):
            return "upload"
        if self.path.startswith("/_stcore/"):
            return "stcore"
        if self.path.startswith("/static/"):
            return "static"
        return "page"


_LOG_LINE = re.compile(r'^\S+ "(?P<method>\S+) (?P<path>\S+)[^"]*" (?P<status>\d+) '
                       r'up="(?P<up>[^"]*)" upstatus="[^"]*" pinned="(?P<pinned>[^"]*)" '
                       r'served="(?P<served>[^"]*)" ua="(?P<ua>[^"]*)"$')


def _logged(value: str) -> str:
    """A logged variable's value: nginx writes an empty one as "-"."""
    return "" if value == "-" else value


def render_nginx_conf(template: str, *, prefix: Path, port: int, replicas: list[tuple[str, int]],
                      cookie: str = STICKY_COOKIE, user: str | None = None,
                      fail_timeout: str = FAIL_TIMEOUT) -> str:
    """The template with its {{ name }} fields filled in for these (name, port) replicas."""
    def server(p: int, backup: bool = False) -> str:
        return (f"        server 127.0.0.1:{p}{' backup' if backup else ''} "
                f"max_fails=1 fail_timeout={fail_timeout};")

    pinned_blocks = []
    for name, p in replicas:
        lines = [f"    upstream opx_{name} {{", f"        zone opx_{name} 64k;", server(p)]
        lines += [server(other, backup=True) for _, other in replicas if other != p]
        lines += ["        keepalive 8;", "    }"]
        pinned_blocks.append("\n".join(lines))
    fields = {
        "prefix": str(prefix),
        "port": str(port),
        "cookie": cookie,
        "user": f"user {user};" if user else "# (not root: nginx keeps this user)",
        "replica_count": str(len(replicas)),
        "cookie_to_upstream": "\n".join(f"        {name} opx_{name};" for name, _ in replicas),
        "address_to_replica": "\n".join(f'        "~(^| )127\\.0\\.0\\.1:{p}$" {name};'
                                        for name, p in replicas),
        "already_pinned": "\n".join(f"        \"{name}:{name}\" '';" for name, _ in replicas),
        "any_servers": "\n".join(server(p) for _, p in replicas),
        "pinned_upstreams": "\n\n".join(pinned_blocks),
    }

    def fill(match: re.Match) -> str:
        return fields[match.group(1)]          # a field the template names and we lack: KeyError
    return re.sub(r"\{\{ (\w+) \}\}", fill, template)


class Demo:
    """nginx and N replicas over one database; a context manager that leaves nothing running."""

    def __init__(self, replicas: int = 2, port: int | None = None, db: str | None = None,
                 say: Callable[[str], None] = print, env: dict[str, str] | None = None,
                 fail_timeout: str = FAIL_TIMEOUT):
        """`env`: the environment of `db init` and the replicas (default: this process's);
        `fail_timeout`: how long nginx leaves a replica alone after it failed once."""
        if replicas < 1:
            raise ValueError("at least one replica")
        self.replica_count = replicas
        self.port = port or free_port()
        self.db = self._absolute(db) if db else None
        self.say = say
        self.base_env = dict(os.environ if env is None else env)
        self.cluster: pgcluster.Cluster | None = None
        self.replicas: list[Replica] = []
        self.nginx: subprocess.Popen | None = None
        self.prefix: Path | None = None
        self.fail_timeout = fail_timeout
        self.cookie_secret = secrets.token_hex(32)

    @staticmethod
    def _absolute(db: str) -> str:
        """A file path relative to the caller's folder made absolute (replicas run from ROOT)."""
        return db if "://" in db else str(Path(db).expanduser().resolve())

    @property
    def proxy_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def access_log_path(self) -> Path:
        assert self.prefix is not None
        return self.prefix / "logs" / "access.log"

    # -- starting -------------------------------------------------------------------------

    def __enter__(self) -> "Demo":
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> None:
        reason = nginx_unavailable()
        if reason:
            raise RuntimeError(reason)
        self._check_port_free()                 # before the slow steps, not after them
        self.prefix = Path(tempfile.mkdtemp(prefix="opx-nginx-"))
        for sub in ("logs", "temp"):
            (self.prefix / sub).mkdir()
        if self.db is None:
            for root in pgcluster.Cluster.remove_leftovers():
                self.say(f"... removed a cluster a killed demo left running ({root})")
            self._step("starting a throwaway PostgreSQL cluster (initdb, pg_ctl)")
            started = time.monotonic()
            self.cluster = pgcluster.Cluster()        # kept first: stop() removes it if start fails
            self.cluster.start()
            self.db = self.cluster.url
            self.say(f"    {self.cluster.server} ({time.monotonic() - started:.1f} s)")
        self._init_database()
        self._start_replicas()
        self._start_nginx()

    def _check_port_free(self) -> None:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)     # as nginx binds
            try:
                s.bind(("127.0.0.1", self.port))
            except OSError as exc:
                raise RuntimeError(f"127.0.0.1:{self.port} cannot be the proxy's port: "
                                   f"{exc.strerror} (choose another with --port)") from None

    def _step(self, what: str) -> None:
        self.say(f"... {what}")

    def _init_database(self) -> None:
        self._step(f"building the database: python -m opx db init --db {self.db}")
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "opx", "db", "init", "--db", self.db],
                              cwd=ROOT, env=self._env(), capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"`opx db init --db {self.db}` failed ({done.returncode}):\n"
                               + (done.stderr or done.stdout)[-3000:])
        summary = done.stdout.strip().splitlines()[-1:] or [""]
        self.say(f"    {summary[0]} ({time.monotonic() - started:.1f} s)")

    def _env(self) -> dict[str, str]:
        env = {**self.base_env, "PYTHONUNBUFFERED": "1"}
        if self.db:
            env["OPX_DB"] = self.db
        return env

    def _start_replicas(self) -> None:
        self._step(f"starting {self.replica_count} Streamlit replica(s)")
        for i in range(self.replica_count):
            self.replicas.append(self._spawn_replica(f"r{i}", free_port()))
        self._wait_until_answering(self.replicas)

    def _spawn_replica(self, name: str, port: int) -> Replica:
        # One secret for all replicas: Streamlit signs its session (and st.login) cookies with it.
        env = {**self._env(), "STREAMLIT_SERVER_COOKIE_SECRET": self.cookie_secret,
               "STREAMLIT_SERVER_FILE_WATCHER_TYPE": "none"}
        log = self.prefix / f"replica-{name}.log"
        with open(log, "ab") as out:
            process = subprocess.Popen(
                # the pages, /api/v1 and /mcp on one port, as `make run` serves them
                [sys.executable, "-m", "opx", "serve", "--host", "127.0.0.1", "--port", str(port)],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent)
        return Replica(name, port, process, log)

    def _wait_until_answering(self, replicas: list[Replica]) -> None:
        started = time.monotonic()
        waiting = list(replicas)
        while waiting:
            for replica in list(waiting):
                if _answers_health(replica.url):
                    waiting.remove(replica)
                    self.say(f"    {replica.name} answers on {replica.url} "
                             f"({time.monotonic() - started:.1f} s)")
                elif replica.process.poll() is not None:
                    raise RuntimeError(f"replica {replica.name} exited "
                                       f"({replica.process.returncode}):\n{_tail(replica.log)}")
            if waiting and time.monotonic() - started > REPLICA_START_SECONDS:
                raise RuntimeError(f"replica {waiting[0].name} did not answer within "
                                   f"{REPLICA_START_SECONDS:.0f} s:\n{_tail(waiting[0].log)}")
            time.sleep(0.1)

    def _start_nginx(self) -> None:
        self._step(f"starting nginx on {self.proxy_url}")
        user = None
        if os.geteuid() == 0:
            # nginx's workers drop root; let them use the prefix (logs, temp files).
            nobody = pwd.getpwnam("nobody")
            user = f"{nobody.pw_name} {grp.getgrgid(nobody.pw_gid).gr_name}"
            for path in [self.prefix, *self.prefix.rglob("*")]:
                os.chown(path, nobody.pw_uid, nobody.pw_gid)
        conf = self.prefix / "nginx.conf"
        conf.write_text(render_nginx_conf(
            TEMPLATE.read_text(), prefix=self.prefix, port=self.port,
            replicas=[(r.name, r.port) for r in self.replicas], user=user,
            fail_timeout=self.fail_timeout))
        command = [str(nginx_binary()), "-p", str(self.prefix), "-c", str(conf),
                   "-e", str(self.prefix / "logs" / "error.log")]
        checked = subprocess.run(command + ["-t", "-q"], capture_output=True, text=True)
        if checked.returncode != 0:
            raise RuntimeError(f"nginx refused {conf}:\n{checked.stderr[-3000:]}")
        with open(self.prefix / "logs" / "nginx.out", "wb") as out:
            self.nginx = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                          preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 20
        while not _answers_health(self.proxy_url):
            if self.nginx.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"nginx did not answer on {self.proxy_url}:\n"
                                   + _tail(self.prefix / "logs" / "error.log"))
            time.sleep(0.1)

    # -- while running --------------------------------------------------------------------

    def kill(self, index: int) -> Replica:
        """SIGKILL replica `index` (and its process group), as a crash would."""
        replica = self.replicas[index]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(replica.process.pid, signal.SIGKILL)
        replica.process.wait()
        return replica

    def restart(self, index: int) -> Replica:
        """Start replica `index` again on its port (after `kill`), as a supervisor would; nginx
        tries it again once its fail_timeout has passed."""
        old = self.replicas[index]
        if old.process.poll() is None:
            raise RuntimeError(f"replica {old.name} is still running")
        self.replicas[index] = self._spawn_replica(old.name, old.port)
        self._wait_until_answering([self.replicas[index]])
        return self.replicas[index]

    def replica_named(self, name: str) -> Replica:
        return next(r for r in self.replicas if r.name == name)

    def access_log(self) -> list[LogEntry]:
        entries = []
        for line in self.access_log_path.read_text(errors="replace").splitlines():
            m = _LOG_LINE.match(line)
            if m:
                tried = [a.strip() for a in m["up"].split(",") if _logged(a.strip())]
                entries.append(LogEntry(m["method"], m["path"], int(m["status"]), tried,
                                        _logged(m["pinned"]), _logged(m["served"]),
                                        _logged(m["ua"])))
        return entries

    # -- stopping -------------------------------------------------------------------------

    def stop(self) -> None:
        """nginx first (no new requests reach a stopping replica), then the replicas, then the
        cluster; a second Ctrl-C does not cut this short."""
        with _signals_held():
            self._stop()

    def _stop(self) -> None:
        if self.nginx is not None:
            _stop_group(self.nginx, signal.SIGTERM)       # nginx: TERM is a fast shutdown
        for replica in self.replicas:
            _stop_group(replica.process)
        if self.cluster is not None:
            with contextlib.suppress(Exception):
                self.cluster.remove()
            self.cluster = None
        if self.prefix is not None:
            shutil.rmtree(self.prefix, ignore_errors=True)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--replicas", type=int, default=2, help="Streamlit replicas (default 2)")
    parser.add_argument("--port", type=int, default=DEFAULT_PROXY_PORT,
                        help=f"the proxy's port on 127.0.0.1 (default {DEFAULT_PROXY_PORT})")
    parser.add_argument("--db", help="a PostgreSQL URL or a DuckDB file (default: a throwaway "
                                     "PostgreSQL cluster)")
    args = parser.parse_args(argv)
    if args.replicas < 1:
        parser.error("--replicas must be at least 1")
    return args


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_interrupt)    # SIGTERM stops cleanly, as Ctrl-C does
    try:
        with Demo(replicas=args.replicas, port=args.port, db=args.db,
                  say=lambda line: print(line, flush=True)) as demo:
            for r in demo.replicas:
                print(f"replica {r.name}: {r.url} (pid {r.process.pid}, log {r.log})")
            print(f"proxy: {demo.proxy_url}/  (access log {demo.access_log_path}; Ctrl-C stops "
                  "everything)", flush=True)
            # without --db a result file would go to data/opx.duckdb, which no replica reads
            print(f"import into it from any host: python -m opx ingest FILE --db {demo.db}",
                  flush=True)
            reported: set[str] = set()
            while True:
                # Say once when a replica dies (e.g. killed by hand to watch the failover).
                for r in demo.replicas:
                    if r.name not in reported and r.process.poll() is not None:
                        reported.add(r.name)
                        print(f"replica {r.name} exited ({r.process.returncode}); the proxy "
                              "sends its browsers to the others", flush=True)
                if demo.nginx.poll() is not None:
                    print(f"error: nginx exited ({demo.nginx.returncode}):\n"
                          + _tail(demo.prefix / "logs" / "error.log"), file=sys.stderr)
                    return 1
                time.sleep(0.5)
    except KeyboardInterrupt:
        print("stopped: nginx, the replicas" + ("" if args.db else " and the PostgreSQL cluster"),
              flush=True)
        return 0
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

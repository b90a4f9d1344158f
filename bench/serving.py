"""`streamlit run` on a free local port, for the browser benchmark and the browser tests (one way
to serve the app in both, so what is measured is what is tested)."""
from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(script: Path, env: dict, timeout: float = 90.0) -> Iterator[str]:
    """Serve `script` headless on 127.0.0.1 and yield its address once `/_stcore/health` answers;
    a server that does not start is a RuntimeError with the end of its output."""
    port = free_port()
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
             "--global.developmentMode", "false"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                        break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    out.seek(0)
                    raise RuntimeError(f"streamlit did not start {script.name}:\n"
                                       + out.read().decode(errors="replace")[-3000:])
                time.sleep(0.1)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()

"""deploy/demo.py killed by SIGKILL cannot stop its PostgreSQL cluster (pg_ctl runs it apart
from the demo); the demo's next start stops and removes it."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from deploy import pgcluster
from deploy.demo import free_port, nginx_unavailable
from tests.conftest import ROOT, require, require_postgres


def _start_demo(port: int) -> tuple[subprocess.Popen, list[str]]:
    demo = subprocess.Popen([sys.executable, "deploy/demo.py", "--replicas", "1", "--port",
                             str(port)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines = []
    deadline = time.monotonic() + 240
    for line in demo.stdout:
        lines.append(line.rstrip())
        if line.startswith("import into it") or time.monotonic() > deadline:
            break
    assert lines and lines[-1].startswith("import into it"), "\n".join(lines)
    return demo, lines


def _answers(server: str) -> bool:
    host, port = server.rsplit(":", 1)
    with socket.socket() as s:
        return s.connect_ex((host, int(port))) == 0


def test_a_killed_demo_leaves_its_cluster_and_the_next_start_removes_it():
    require_postgres()
    require(nginx_unavailable(), "the replica demo")
    first, lines = _start_demo(free_port())
    url = lines[-1].split("--db ", 1)[1]
    assert url.startswith("postgresql://postgres@127.0.0.1:")
    server = url.split("@", 1)[1].split("/", 1)[0]
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    left = _owned_by(first.pid)
    assert _answers(server) and left, "the killed demo's cluster should still be running"
    assert set(left) <= set(pgcluster.Cluster.leftovers())

    second, lines = _start_demo(free_port())
    try:
        assert any(line.startswith("... removed a cluster a killed demo left running")
                   for line in lines), "\n".join(lines)
        assert not _answers(server)
        assert not any(root.exists() for root in left)
        # its own cluster is not a leftover: its owner is alive
        assert not any(r in pgcluster.Cluster.leftovers() for r in _owned_by(second.pid))
    finally:
        second.send_signal(signal.SIGTERM)
        second.wait(60)


def _owned_by(pid: int) -> list[Path]:
    import tempfile
    return [root for root in Path(tempfile.gettempdir()).glob(pgcluster.PREFIX + "*")
            if (root / pgcluster.OWNER_FILE).exists()
            and (root / pgcluster.OWNER_FILE).read_text().strip() == str(pid)]

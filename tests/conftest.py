from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from opx import store  # noqa: E402
from opx.store import pg_local_copy  # noqa: E402

# The command line saves a PostgreSQL store's copy between runs (opx.store.pg_local_copy): the
# suite's processes, and the CLI runs they start, keep theirs in a folder of the run's own.
os.environ.setdefault(pg_local_copy.CACHE_ENV, tempfile.mkdtemp(prefix="opx-test-cache-"))

# Third-party sample files live beside the repository and are never copied into it.
SHARED_FIXTURES = ROOT.parent / "shared" / "fixtures"


def shared_fixture(relative: str) -> Path:
    """A file of ../shared/fixtures, or a skip that says why it is absent."""
    path = SHARED_FIXTURES / relative
    if not path.is_file():
        pytest.skip(f"shared fixture {path} is absent (the shared/ folder next to the repository "
                    "holds third-party samples that are never copied into it)")
    return path
from opx.ingest.builtin import builtin_runs  # noqa: E402
from opx.catalog import load_catalog  # noqa: E402


def _scan_installed_components_once() -> None:
    """Every new AppTest scans the metadata of every installed package for Streamlit components
    (streamlit.components.v2.manifest_scanner), about 40 % of a page run under AppTest. The
    installed packages do not change during a test session, so the scan is done once."""
    import functools
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:            # a Streamlit without v2 components scans nothing
        return
    scan = manifest_scanner.scan_component_manifests
    if not hasattr(scan, "cache_info"):
        manifest_scanner.scan_component_manifests = functools.cache(scan)


_scan_installed_components_once()


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()


@pytest.fixture(scope="session")
def seed_db(tmp_path_factory) -> Path:
    """A database built from the built-in data, as `python -m opx db init` builds it."""
    path = tmp_path_factory.mktemp("db") / "opx.duckdb"
    with store.writing(path) as con:
        store.write_runs(con, builtin_runs())
    return path


@pytest.fixture(scope="session")
def full_db(tmp_path_factory) -> Path:
    """The database `make run` builds: published figures and the built-in simulated envelopes."""
    from opx.simulate.builtin import builtin_simulations
    path = tmp_path_factory.mktemp("fulldb") / "opx.duckdb"
    simulated, _ = builtin_simulations()
    with store.writing(path) as con:
        store.write_runs(con, builtin_runs() + simulated)
    from opx.answers import precompute
    precompute.refresh(path)          # as `db init` does once its write is done
    return path


@pytest.fixture
def app_db(seed_db, tmp_path, monkeypatch) -> Path:
    """A writable copy of the seed database that the app under test opens (OPX_DB)."""
    import shutil
    path = tmp_path / "opx.duckdb"
    shutil.copy(seed_db, path)
    monkeypatch.setenv("OPX_DB", str(path))
    return path


# -- the store on both backends ------------------------------------------------------------------
# Store contract tests take `empty_store` or `seed_store`, parametrized over a DuckDB file and a
# PostgreSQL database (a throwaway cluster from Debian's package, deploy/pgcluster.py, one per
# test session). Without the server they skip with the reason; in CI (CI=true) they must run.

def require(reason: str | None, what: str) -> None:
    """A part a test needs is missing (`reason`): skip with it, or fail in CI (CI=true)."""
    import os
    if reason is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} tests must run in CI: {reason}")
    pytest.skip(reason)


def require_postgres() -> None:
    from deploy import pgcluster
    require(pgcluster.unavailable(), "PostgreSQL")


@pytest.fixture(scope="session")
def pg_cluster():
    require_postgres()
    from deploy.pgcluster import Cluster
    with Cluster() as cluster:
        yield cluster


_databases = iter(range(1, 10 ** 6))


def new_pg_database(cluster) -> str:
    """A new empty database in the cluster, as a URL."""
    import os
    name = f"opx_{os.getpid()}_{next(_databases)}"
    cluster.psql(f"CREATE DATABASE {name}")
    return cluster.url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["duckdb", "postgres"])
def empty_store(request, tmp_path):
    """Where a new store goes: a DuckDB file that does not exist yet, or an empty Postgres
    database."""
    if request.param == "duckdb":
        return tmp_path / "a.duckdb"
    return new_pg_database(request.getfixturevalue("pg_cluster"))


@pytest.fixture(scope="session")
def seed_pg(pg_cluster) -> str:
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, builtin_runs())
    return url


@pytest.fixture(params=["duckdb", "postgres"])
def seed_store(request):
    """The built-in data (as `seed_db`) on each backend; read-only by convention."""
    if request.param == "duckdb":
        return request.getfixturevalue("seed_db")
    return request.getfixturevalue("seed_pg")

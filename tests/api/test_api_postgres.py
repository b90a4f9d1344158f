"""On a PostgreSQL store with two replicas (two `opx serve` on one database): a run posted to
replica A is answered by replica B's API at its next request, and a delete on B is seen by A."""
from __future__ import annotations

import contextlib

from opx import store
from tests.api.conftest import TOKEN, call, serve
from tests.conftest import ROOT, new_pg_database
from opx.ingest.builtin import builtin_runs


def test_a_run_posted_to_one_replica_is_answered_by_the_other(pg_cluster):
    url = new_pg_database(pg_cluster)
    with store.writing(url) as con:
        store.write_runs(con, builtin_runs())
    body = (ROOT / "tests" / "fixtures" / "vllm" / "metadata.json").read_bytes()
    query = "hardware=h100&model=llama-3.1-8b"
    with contextlib.ExitStack() as stack:
        a, b = (stack.enter_context(serve(url, OPX_ADMIN_TOKEN=TOKEN)) for _ in range(2))
        def ids(replica):
            return {r["id"]: r for r in call(f"{replica}/api/v1/runs?{query}&limit=1000"
                                                ).json()["runs"]}
        before = ids(b)                   # B has read (and cached) the store
        made = call(f"{a}/api/v1/runs?{query}&gpus=8&filename=metadata.json", "POST", body,
                    token=TOKEN)
        assert made.status == 201, made.body[:300]
        new = {k: v for k, v in ids(b).items() if k not in before}
        assert len(new) == made.json()["runs_added"] >= 1
        run_id = next(iter(new))
        assert call(f"{b}/api/v1/runs/{run_id}").status == 200
        assert call(f"{b}/api/v1/runs/{run_id}").json()["points"] == \
            call(f"{a}/api/v1/runs/{run_id}").json()["points"] != []
        assert call(f"{b}/api/v1/runs/{run_id}", "DELETE", token=TOKEN).status == 200
        assert call(f"{a}/api/v1/runs/{run_id}").status == 404

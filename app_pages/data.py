"""Data (`/data`): import result files, browse and delete runs, download everything."""
import streamlit as st

from opx import store
from opx.errors import OpxError
from opx.store.importer import changed_data, import_uploads
from opx.ingest.core import MAX_FILE_BYTES, IngestOptions, format_names
from ui import data, permissions, share, urlstate, widgets
from ui.coverage import show_coverage
from ui.permissions import can_write
from ui.text import escape_md

catalog = data.catalog()
urlstate.leave_view("data")          # the session's view stays as it is, for the next page
permissions.sidebar_controls()
allowed, why = can_write()
st.title("Data")
widgets.watch_link_length(notice=True)
if not allowed:
    st.info(escape_md(why), icon=":material/lock:")
widgets.or_stop(show_coverage)

# -- import ---------------------------------------------------------------------------------------
st.header("Import result files")
st.caption(escape_md(f"Formats detected automatically: {', '.join(format_names())}. Each file is "
                     f"imported whole or not at all; files over {MAX_FILE_BYTES // 2**20} MiB are "
                     "refused. Re-importing a file changes nothing."))
uploads = st.file_uploader("Result files", accept_multiple_files=True, key="uploads",
                           disabled=not allowed, help=why or None)
with st.expander("What the files do not say (these override the files)"):
    c1, c2, c3 = st.columns(3)
    hardware = c1.selectbox("Hardware", [""] + data.options("hardware"), key="in_hardware",
                            format_func=lambda h: catalog.hardware_name(h) if h else "from the file")
    model = c2.selectbox("Model", [""] + data.options("model"), key="in_model",
                         format_func=lambda m: catalog.model_name(m) if m else "from the file")
    workload = c3.selectbox("Workload", [""] + data.options("workload"), key="in_workload",
                            format_func=lambda w: catalog.workload_name(w) if w else "from the file")
    gpus = c1.number_input("GPUs (all, prefill + decode; 0 = from the file)", 0, 100_000, 0,
                           key="in_gpus")
    framework = c2.text_input("Framework", key="in_framework", placeholder="from the file")
    precision = c3.text_input("Precision", key="in_precision", placeholder="from the file")
    meta_text = st.text_area("Other metadata, one KEY=VALUE per line", key="in_meta")
    fmt = st.selectbox("Format", [""] + format_names(), key="in_format",
                       format_func=lambda f: f or "detect")

col_check, col_import = st.columns(2)
check = col_check.button("Check without importing", disabled=not uploads or not allowed,
                         key="check", help=why or None)
do_import = col_import.button("Import", type="primary", disabled=not uploads or not allowed,
                              key="import", help=why or None)

# Each write checks permission itself (`require_write`), not only by disabling its control.
with widgets.in_place():          # a check's or an import's results, this run only
    if (check or do_import) and uploads and permissions.require_write():
        meta, bad = data.meta_from_text(meta_text)
        if bad:
            st.error(escape_md(f"error: metadata: expected KEY=VALUE, got: {'; '.join(bad)}"))
        else:
            options = IngestOptions(format=fmt or None, hardware=hardware or None,
                                    model=model or None, workload=workload or None,
                                    gpus=int(gpus) or None,
                                    framework=framework.strip() or None,
                                    precision=precision.strip() or None, meta=meta)
            try:
                results = import_uploads([(u.name, u.getvalue()) for u in uploads], options,
                                         data.database(), catalog, dry_run=check)
                if changed_data(results, dry_run=check):
                    data.refresh_derived()
            except OpxError as exc:
                st.error(escape_md(f"error: {exc}"))
            else:
                verb = "would add" if check else "added"
                rows = [{"File": r.path.name, "Format": r.format or "–",
                         "Result": (f"{verb} {r.runs_added} run(s), {r.points_added} point(s)"
                                    if r.ok else "error: " + r.error.removeprefix(f"{r.path}: "))}
                        for r in results]
                failed = sum(not r.ok for r in results)
                summary = f"{len(results) - failed} file(s) {'valid' if check else 'imported'}, " \
                          f"{failed} refused."
                (st.warning if failed else st.success)(summary)
                for exc in dict.fromkeys(r.store_error for r in results if r.store_error):
                    st.error(escape_md(f"error: {exc}"))
                st.dataframe(rows, hide_index=True, key="import_results")
                for r in results:
                    for notice in r.notices:
                        st.caption(escape_md(f"{r.path.name}: {notice}"))

# -- runs -----------------------------------------------------------------------------------------
st.header("Stored runs")
runs = widgets.or_stop(data.runs_overview)

query = st.text_input("Search runs (any column)", key="q", bind="query-params")
shown = data.search_runs(runs, query)
st.caption(f"{len(shown)} of {len(runs)} run(s)")
st.dataframe(shown.drop(columns=["ingested_at"]), hide_index=True, key="runs_table",
             column_config={"date": st.column_config.DateColumn("date", format="YYYY-MM-DD")})


if len(shown):
    labels = {r.id: f"{r.id} · {r.hardware} · {r.model} · {r.workload} · {r.provenance} · "
                    f"{r.points} point(s)" for r in shown.itertuples()}
    chosen = st.selectbox("Run", list(labels), format_func=labels.get, key="delete_choice")
    detail = shown[shown.id == chosen].iloc[0]
    # Shown as plain text: labels, notes and sources come from imported files.
    st.text("\n".join(f"{name}: {'' if value is None else value}" for name, value in (
        ("label", detail.label), ("framework", detail.framework), ("precision", detail.precision),
        ("provenance", detail.provenance), ("source", detail.source),
        ("notes", detail.notes))))
    if st.button("Delete…", key="delete", disabled=not allowed, help=why or None) \
            and permissions.require_write():
        st.session_state["pending_delete"] = (chosen, labels[chosen])

# Deleting asks once more, naming the run, before anything is removed.
pending = st.session_state.get("pending_delete")
if pending:
    run_id, summary = pending
    with st.container(border=True):
        st.warning("Delete this run and all its points? This cannot be undone.")
        st.text(summary)
        yes, no = st.columns(2)
        if yes.button("Delete run", type="primary", key="confirm_delete", disabled=not allowed):
            if permissions.require_write():
                data.written(lambda con: store.delete_run(con, run_id))
                st.session_state.pop("pending_delete")
                st.session_state["deleted_run"] = summary
                st.rerun()
            st.session_state.pop("pending_delete")
        if no.button("Cancel", key="cancel_delete"):
            st.session_state.pop("pending_delete")
            st.rerun()
if "deleted_run" in st.session_state:
    st.success(escape_md(f"Deleted {st.session_state.pop('deleted_run')}"))

# -- saved views ----------------------------------------------------------------------------------
st.header("Saved views")
share.saved_views_admin(allowed, why)

# -- download -------------------------------------------------------------------------------------
st.header("Download")
st.caption("Every run and point, one row per point, with the canonical column names "
           "(the opx CSV format: it imports back unchanged).")


c1, c2 = st.columns(2)
c1.download_button("Runs and points (CSV)", lambda: data.points_file("csv"), file_name="opx-runs-points.csv",
                   mime="text/csv", on_click="ignore", key="dl_csv")
c2.download_button("Runs and points (Parquet)", lambda: data.points_file("parquet"), file_name="opx-runs-points.parquet",
                   mime="application/vnd.apache.parquet", on_click="ignore", key="dl_parquet")

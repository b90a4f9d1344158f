"""Measured calibration rows: the DeepSeek rows of AIConfigurator's silicon_sample.csv, cleaned into
the simulator's row format. Every rule that drops or relabels a row is here and counted.

Rules (docs/simulator.md, "Calibration data"):
1. DeepSeek-R1 / V3 / V3.1 rows only (one architecture: deepseek-r1 in the catalog).
2. The concurrency comes from the `silicon_concurrency=N` tag.
3. One measurement appears up to three times (an InferenceX db-dump row and one or two
   `source_file=` rows with the same TTFT and TPOT): duplicates are merged, keeping the db-dump row,
   which carries the worker counts.
4. Layouts: `moe_tp x moe_ep` must equal the GPUs of the attention layout. Rows where TP (or
   attention DP) equals moe_tp x moe_ep with moe_tp = moe_ep = m > 1 are read as TEPm (DEPm): the
   same measurement appears elsewhere labelled that way (e.g. `tp16 moe 4x4` = `tp4 ep4`).
5. Aggregated rows with TP >= 12 and MoE-TP = TP (GB200 "agg tp12..tp72") are dropped, by the
   importer's own rule (`opx.ingest.aiconfigurator.mislabelled_agg`): the reference (§6.1) reads
   them as mislabelled disaggregated totals, and TP 12/20/28/36/52/72 do not divide the 128
   attention heads.
6. Disaggregated rows without prefill and decode worker counts are dropped: the decode batch per GPU
   cannot be known.
7. Sequence lengths: InferenceX draws lengths in [0.8 L, L], so the mean is 0.9 x the label.

Flags (rows are kept; docs/simulator.md, "Calibration data", says how the fit uses them):
8. `mtp_suspect`: the file does not record MTP. A TensorRT-LLM measurement that exists only in the
   `source_file=` CSVs (no db-dump copy) is flagged. Evidence, model-free (`mtp_pair_evidence_*`):
   for configurations measured both ways (same system, backend, precision, ISL/OSL, layout and
   concurrency), the db-dump TPOT is 1.61x the source-file-only one in the median of 65
   TensorRT-LLM pairs (1.71x at C <= 8 falling to 1.32x above C = 128, the signature of MTP, whose
   gain shrinks as decode becomes compute-bound), but only 1.23x in the 11 SGLang pairs (a software
   version difference, not MTP), so SGLang rows are not flagged. The flag is provenance, not a fit
   result.
9. `ttft_artefact` (set in calibration.py, which has the model accounting): a closed loop of C
   requests cannot make a request wait for more than the other requests' prefills. A row whose
   TTFT exceeds 1 s + C x ISL / (1,000 tokens/s x prefill GPUs) while its decode pool can hold all
   C sequences (KV capacity from the fixed accounting) is a stall or warm-up artefact: its TTFT
   (and the throughput derived from it) is left out of the fit and of the TTFT error, its TPOT is
   kept. The constants are fixed a priori (1,000 prompt tokens/s per GPU is a small fraction of
   what any system here prefills), not fitted.
"""
from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from opx.ingest.aiconfigurator import mislabelled_agg
from opx.simulate.hardware import SILICON_SYSTEMS

LENGTH_FACTOR = 0.9
DEEPSEEK = ("deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "nvidia/DeepSeek-R1-NVFP4",
            "nvidia/DeepSeek-V3.1-NVFP4")


def default_silicon_path() -> Path:
    from opx.config import ROOT
    return ROOT.parent / "shared" / "fixtures" / "aiconfigurator" / "silicon_sample.csv"


def resolve_path(path: Path | None) -> Path:
    p = Path(path) if path is not None else default_silicon_path()
    if not p.is_file():
        raise FileNotFoundError(
            f"{p}: measured calibration data not found (AIConfigurator silicon_sample.csv; expected "
            f"in shared/fixtures/aiconfigurator/ beside the repository)")
    return p


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _layout(tp, adp, mtp, mep):
    """(tp, dp, ep, moetp) or None when inconsistent; applies rule 4."""
    vals = [tp, adp, mtp, mep]
    if any(pd.isna(v) or v <= 0 for v in vals):
        return None
    tp, adp, mtp, mep = (int(v) for v in vals)
    if mtp == mep and mtp > 1:
        m = mtp
        if tp == m * m and adp == 1:
            return (m, 1, m, 1)
        if adp == m * m and tp == 1:
            return (1, m, m, 1)
    if mtp * mep != tp * adp:
        return None
    return (tp, adp, mep, mtp)


def load_rows(path: Path | None = None, model_paths: tuple[str, ...] | None = DEEPSEEK
              ) -> tuple[pd.DataFrame, dict]:
    """Clean rows, one per measurement, and counts of what each rule removed: the DeepSeek rows
    (rule 1, the calibration's), or those of `model_paths` (None: every model; the anchoring
    validation reads them all)."""
    p = resolve_path(path)
    df = pd.read_csv(p)
    stats: Counter = Counter()
    stats["rows_in_file"] = len(df)
    ds = df[df.model_path.isin(model_paths)].copy() if model_paths is not None else df.copy()
    stats["deepseek_rows"] = len(ds)
    ds["conc"] = pd.to_numeric(ds.silicon_data_source.str.extract(r"silicon_concurrency=(\d+)")[0],
                               errors="coerce")
    ds = ds[ds.conc.notna() & ds.silicon_tpot_ms.gt(0) & ds.silicon_ttft_ms.gt(0)
            & ds.system.isin(SILICON_SYSTEMS)]
    stats["with_concurrency"] = len(ds)
    ds["is_dump"] = ds.silicon_data_source.str.startswith("db-dump")
    ds["has_workers"] = ds.prefill_num_workers.notna() & ds.decode_num_workers.notna()
    # rule 3 merges copies of one measurement; across models only when reading several
    by_model = ds.model_path + "|" if model_paths != DEEPSEEK else ""
    ds["key"] = (by_model + ds.system + "|" + ds.backend + "|" + ds.precision + "|" + ds.isl.astype(str) + "|"
                 + ds.osl.astype(str) + "|" + ds.conc.astype(str) + "|"
                 + ds.silicon_tpot_ms.round(4).astype(str) + "|" + ds.silicon_ttft_ms.round(3).astype(str))
    ds = ds.sort_values(["key", "is_dump", "has_workers"], ascending=[True, False, False])
    ds = ds.drop_duplicates("key", keep="first")
    stats["unique_measurements"] = len(ds)
    out = []
    for r in ds.itertuples(index=False):
        if r.mode == "agg":
            moe_tp = None if pd.isna(r.moe_tp_size) else int(r.moe_tp_size) or None
            if mislabelled_agg(int(r.tp_size), moe_tp):
                stats["dropped_agg_mislabelled_tp"] += 1
                continue
            lay = _layout(r.tp_size, r.attention_dp_size, r.moe_tp_size, r.moe_ep_size)
            if lay is None:
                stats["dropped_inconsistent_layout"] += 1
                continue
            pp = int(r.pp_size) if not pd.isna(r.pp_size) and r.pp_size > 0 else 1
            d, pl, n_d, n_p, agg = lay, lay, 1, 1, 1
        else:
            if not r.has_workers:
                stats["dropped_disagg_no_worker_counts"] += 1
                continue
            d = _layout(r.decode_tp_size, r.decode_attention_dp_size, r.decode_moe_tp_size,
                        r.decode_moe_ep_size)
            pl = _layout(r.prefill_tp_size, r.prefill_attention_dp_size, r.prefill_moe_tp_size,
                         r.prefill_moe_ep_size)
            if d is None or pl is None:
                stats["dropped_inconsistent_layout"] += 1
                continue
            pp = int(r.decode_pp_size) if not pd.isna(r.decode_pp_size) and r.decode_pp_size > 0 else 1
            n_d, n_p, agg = int(r.decode_num_workers), int(r.prefill_num_workers), 0
        out.append({
            "id": r.id, "system": r.system, "hardware": SILICON_SYSTEMS[r.system],
            "model_path": r.model_path,
            "backend": r.backend, "precision": r.precision, "mode": r.mode,
            "isl_label": int(r.isl), "osl_label": int(r.osl),
            "isl": r.isl * LENGTH_FACTOR, "osl": r.osl * LENGTH_FACTOR, "conc": float(r.conc),
            "d_tp": d[0], "d_dp": d[1], "d_ep": d[2], "d_moetp": d[3], "d_pp": pp, "n_d": n_d,
            "p_tp": pl[0], "p_dp": pl[1], "p_ep": pl[2], "p_moetp": pl[3], "n_p": n_p, "agg": agg,
            "ttft_s": r.silicon_ttft_ms / 1e3, "tpot_s": r.silicon_tpot_ms / 1e3,
            "source": str(r.silicon_data_source).split(";")[0],
            "from_dump": bool(r.is_dump),
        })
    rows = pd.DataFrame(out)
    # rule 8: provenance flag for hidden MTP, with the pair evidence that motivates it
    rows["mtp_suspect"] = ~rows.from_dump & (rows.backend == "trtllm")
    same = ["system", "backend", "precision", "isl_label", "osl_label", "d_tp", "d_dp", "d_ep",
            "d_moetp", "d_pp", "n_d", "p_tp", "p_dp", "p_ep", "p_moetp", "n_p", "agg", "conc"]
    grp = rows.groupby(same)
    both = (grp.tpot_s.transform("size") == 2) & (grp.from_dump.transform("nunique") == 2)
    pairs = rows[both]
    for backend, d in pairs.groupby("backend"):
        key = d[same].astype(str).agg("|".join, axis=1)
        dump = d[d.from_dump].set_index(key[d.from_dump]).tpot_s
        src = d[~d.from_dump].set_index(key[~d.from_dump]).tpot_s
        ratio = (dump / src.reindex(dump.index)).dropna()
        stats[f"mtp_pair_evidence_{backend}_pairs"] = int(len(ratio))
        stats[f"mtp_pair_evidence_{backend}_median_dump_over_source_tpot"] = round(float(ratio.median()), 3)
    stats["mtp_suspect_rows"] = int(rows.mtp_suspect.sum())
    stats["rows_used"] = len(rows)
    for sysname, n in rows.system.value_counts().items():
        stats[f"rows_used_{sysname}"] = int(n)
    gpus = np.where(rows["agg"] > 0, rows.n_d * rows.d_tp * rows.d_dp * rows.d_pp,
                    rows.n_d * rows.d_tp * rows.d_dp * rows.d_pp + rows.n_p * rows.p_tp * rows.p_dp)
    rows["gpus"] = gpus
    e2e = rows.ttft_s + (rows.osl - 1) * rows.tpot_s
    rows["thr_output_per_gpu"] = rows.conc * rows.osl / e2e / rows.gpus
    return rows.reset_index(drop=True), dict(stats)

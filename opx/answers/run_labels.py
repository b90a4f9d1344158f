"""Stored runs' fields in the words every page shows: a deployment as `models.Deployment.describe`
says it, once per distinct deployment of a frame."""
from __future__ import annotations

import numpy as np
import pandas as pd

from models import Deployment


DEPLOYMENT_FIELDS = ["tp", "ep", "dp_attention", "disaggregated", "gpus_prefill", "gpus_decode",
                      "gpus_total", "mtp"]


def deployment_labels(df: pd.DataFrame) -> list[str]:
    """Each row's `deployment_label`, made once per distinct deployment (a run's points, and
    often many runs, share one)."""
    made: dict[tuple, str] = {}
    out = []
    for r in df[DEPLOYMENT_FIELDS].itertuples(index=False):
        key = tuple(v if given(v) else None for v in r)
        if key not in made:
            made[key] = deployment_label(r)
        out.append(made[key])
    return out


def deployment_label(r) -> str:
    """A stored run's deployment in the words `models.Deployment.describe` uses everywhere."""
    def whole(v):
        return int(v) if given(v) else None

    def flag(v):
        return bool(v) if given(v) else None
    return Deployment(tp=whole(r.tp), ep=whole(r.ep), dp_attention=flag(r.dp_attention),
                      disaggregated=bool(flag(r.disaggregated)), gpus_prefill=whole(r.gpus_prefill),
                      gpus_decode=whole(r.gpus_decode), gpus_total=int(r.gpus_total),
                      mtp=flag(r.mtp)).describe()


def given(v) -> bool:
    return v is not None and not (isinstance(v, float) and np.isnan(v)) and v is not pd.NA

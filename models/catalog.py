"""Catalog entries: hardware, models (LLMs) and workloads, each spec value with its source."""
from __future__ import annotations

import re

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

SLUG_PATTERN = r"^[a-z0-9][a-z0-9.\-]*$"

# Other spellings importers may meet, compared in lower case.
Aliases = Annotated[tuple[str, ...], AfterValidator(lambda v: tuple(a.lower() for a in v))]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SpecValue(_Strict):
    """One number with where it came from; `assumed` marks figures we estimated."""
    value: float = Field(ge=0)
    unit: str
    source: str = Field(min_length=1)
    assumed: bool = False
    note: str = ""


class Hardware(_Strict):
    slug: str = Field(pattern=SLUG_PATTERN)
    name: str = Field(min_length=1)
    vendor: str
    aliases: Aliases = ()
    system_gpus: int = Field(gt=0)
    fp4_dense_pflops: SpecValue | None = None
    fp8_dense_pflops: SpecValue
    bf16_dense_pflops: SpecValue
    hbm_gb: SpecValue
    hbm_tb_s: SpecValue
    scale_up_tb_s: SpecValue
    nvlink_domain: SpecValue
    power_w_all_in: SpecValue
    usd_per_gpu_hour: SpecValue


class LLM(_Strict):
    slug: str = Field(pattern=SLUG_PATTERN)
    name: str = Field(min_length=1)
    hf_id: str = ""
    aliases: Aliases = ()
    attention: str
    source: str = Field(min_length=1)
    assumed: bool = False
    note: str = ""
    total_params_b: float = Field(gt=0)
    active_params_b: float = Field(gt=0)
    layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    kv_bytes_per_token: int = Field(ge=0)
    experts: int = Field(ge=0)
    top_k: int = Field(ge=0)
    mtp_layers: int = Field(ge=0)


class Workload(_Strict):
    slug: str = Field(pattern=SLUG_PATTERN)
    name: str = Field(min_length=1)
    isl: int = Field(gt=0)
    osl: int = Field(gt=0)
    prefix_hit_rate: float = Field(ge=0, le=1)
    description: str = ""
    source: str = ""


class Catalog(_Strict):
    hardware: dict[str, Hardware]
    models: dict[str, LLM]
    workloads: dict[str, Workload]

    def hardware_name(self, slug: str) -> str:
        hw = self.hardware.get(slug)
        return hw.name if hw else slug

    def model_name(self, slug: str) -> str:
        m = self.models.get(slug)
        return m.name if m else slug

    def workload_name(self, slug: str) -> str:
        w = self.workloads.get(slug)
        return w.name if w else slug

    def resolve_hardware(self, spelling: str) -> str | None:
        """Map another spelling (`gb300`, `GB300 NVL72`) onto a catalog slug."""
        return _resolve(spelling, {k: (v.aliases, v.name) for k, v in self.hardware.items()})

    def resolve_model(self, spelling: str) -> str | None:
        return _resolve(spelling, {k: (v.aliases + ((v.hf_id,) if v.hf_id else ()), v.name)
                                   for k, v in self.models.items()})

    def resolve_workload(self, spelling: str) -> str | None:
        """A slug or name, or the lengths spelled `isl8192-osl1024` (how opx once named a pair
        the catalog lacked, so such links still open)."""
        found = _resolve(spelling, {k: ((), v.name) for k, v in self.workloads.items()})
        lengths = re.fullmatch(r"isl(\d+)-osl(\d+)", spelling.strip().lower())
        if found is None and lengths:
            isl, osl = int(lengths[1]), int(lengths[2])
            found = next((k for k, w in self.workloads.items() if (w.isl, w.osl) == (isl, osl)),
                         None)
        return found


def workload_slug(isl: int, osl: int) -> str:
    """The readable slug of an ISL/OSL pair: `8k1k` when both are whole multiples of 1,024 (as
    InferenceX writes them), else each length as `4k` or as its number, joined by `-`
    (`1k-128`, `1000-100`)."""
    def part(n: int) -> str:
        return f"{n // 1024}k" if n % 1024 == 0 else str(n)
    if isl % 1024 == 0 and osl % 1024 == 0:
        return part(isl) + part(osl)
    return f"{part(isl)}-{part(osl)}"


def workload_label(isl: int, osl: int) -> str:
    """`4,096 in / 1,024 out`."""
    return f"{isl:,} in / {osl:,} out"


def _resolve(spelling: str, table: dict[str, tuple[tuple[str, ...], str]]) -> str | None:
    s = spelling.strip().lower()
    for slug, (aliases, name) in table.items():
        if s == slug or s == name.lower() or s in {a.lower() for a in aliases}:
            return slug
    return None

"""Parallel layouts: labels, parsing, and the search space for a GPU budget.

Labels: `TP8` (attention TP8, MoE TP8), `TEP8` (attention TP8, experts EP8), `DEP16` (attention
data-parallel over 16 GPUs, experts EP16), `TP8-PP2` (two pipeline stages of TP8), and
disaggregated `disagg 2xDEP4+1xDEP32` (2 prefill instances of DEP4, 1 decode instance of DEP32).
A trailing ` MTP2` names the MTP depth of a curve. An aggregated layout is replicated to fill the
budget (TP8 on 72 GPUs = 9 instances); a disaggregated one is a unit replicated likewise.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Pool:
    kind: str           # TP, TEP, DEP
    size: int           # GPUs per pipeline stage
    pp: int = 1

    @property
    def tp(self) -> int:
        return 1 if self.kind == "DEP" else self.size

    @property
    def dp(self) -> int:
        return self.size if self.kind == "DEP" else 1

    @property
    def ep(self) -> int:
        return 1 if self.kind == "TP" else self.size

    @property
    def moetp(self) -> int:
        return self.size if self.kind == "TP" else 1

    @property
    def gpus(self) -> int:
        return self.size * self.pp

    @property
    def label(self) -> str:
        return f"{self.kind}{self.size}" + (f"-PP{self.pp}" if self.pp > 1 else "")


@dataclass(frozen=True)
class Layout:
    decode: Pool
    n_d: int = 1
    prefill: Pool | None = None      # None: aggregated (prefill runs on the decode instances)
    n_p: int = 0

    @property
    def disaggregated(self) -> bool:
        return self.prefill is not None

    @property
    def unit_gpus(self) -> int:
        return self.n_d * self.decode.gpus + (self.n_p * self.prefill.gpus if self.prefill else 0)

    @property
    def label(self) -> str:
        if self.prefill is None:
            return self.decode.label
        return f"disagg {self.n_p}x{self.prefill.label}+{self.n_d}x{self.decode.label}"


_POOL = r"(TP|TEP|DEP)(\d+)(?:-PP(\d+))?"


def _pool(kind: str, size: str, pp: str | None) -> Pool:
    return Pool(kind, int(size), int(pp) if pp else 1)


def parse_label(label: str) -> tuple[Layout, int | None]:
    """A layout label (optionally ending in ` MTPn`) -> (Layout, MTP depth or None)."""
    text = " ".join(str(label).strip().split())
    mtp = None
    m = re.fullmatch(r"(.*?)\s*MTP(\d+)", text, flags=re.I)
    if m:
        text, mtp = m.group(1).strip(), int(m.group(2))
    m = re.fullmatch(_POOL, text, flags=re.I)
    if m:
        pool = _pool(m.group(1).upper(), m.group(2), m.group(3))
        layout = Layout(decode=pool)
    else:
        m = re.fullmatch(rf"disagg\s+(\d+)\s*x\s*{_POOL}\s*\+\s*(\d+)\s*x\s*{_POOL}", text, flags=re.I)
        if not m:
            raise ValueError(
                f"unknown layout {label!r}: expected TPn, TEPn, DEPn (optionally -PPn) or "
                f"'disagg <n>x<prefill pool>+<n>x<decode pool>', e.g. 'disagg 2xDEP4+1xDEP32'")
        layout = Layout(prefill=_pool(m.group(2).upper(), m.group(3), m.group(4)), n_p=int(m.group(1)),
                        decode=_pool(m.group(6).upper(), m.group(7), m.group(8)), n_d=int(m.group(5)))
    for pool in (layout.decode, layout.prefill):
        if pool is not None and (pool.size < 1 or pool.pp < 1):
            raise ValueError(f"layout {label!r}: sizes must be positive")
    if layout.disaggregated and (layout.n_p < 1 or layout.n_d < 1):
        raise ValueError(f"layout {label!r}: instance counts must be positive")
    return layout, mtp


def _sizes(limit: int) -> list[int]:
    out, s = [], 1
    while s <= limit:
        out.append(s)
        s *= 2
    return out


def candidate_pools(moe: bool, domain: int, budget: int, heads_ok) -> list[Pool]:
    """Pools within one scale-up domain (TP/TEP sizes must divide the attention heads)."""
    pools = []
    for s in _sizes(min(domain, budget)):
        if heads_ok(s) and s <= 16:
            pools.append(Pool("TP", s))
        if moe and s >= 2:
            if heads_ok(s) and s <= 16:
                pools.append(Pool("TEP", s))
            pools.append(Pool("DEP", s))
    return pools


def search_space(moe: bool, domain: int, budget: int, heads_ok, fits) -> list[Layout]:
    """Aggregated layouts and disaggregated P:D units for a GPU budget. `fits(pool)` says whether
    a pool's weights fit with room for KV; pipeline stages are added when nothing else fits."""
    pools = [p for p in candidate_pools(moe, domain, budget, heads_ok) if fits(p)]
    if not pools:   # the model needs more than one scale-up domain: TP x PP
        for pp in (2, 4, 8):
            for s in _sizes(min(domain, budget // pp)):
                p = Pool("TP", s, pp)
                if heads_ok(s) and p.gpus <= budget and fits(p):
                    pools.append(p)
            if pools:
                break
    layouts = [Layout(decode=p, n_d=1) for p in pools]
    # disaggregated units: prefill pools up to 8 GPUs, decode pools of 4+ GPUs
    pre = [p for p in pools if p.gpus <= 8 and p.pp == 1]
    dec = [p for p in pools if p.gpus >= 4 and p.pp == 1 and p.kind != "TP" or p.kind == "TP" and p.gpus == 8]
    for d in dec:
        for n_d in (1, 2, 4, 8):
            if n_d * d.gpus > budget - 1:
                continue
            for p in pre:
                room = (budget - n_d * d.gpus) // p.gpus
                for n_p in range(1, min(room, 16) + 1):
                    # P:D GPU ratios from 1:16 to 4:1 cover every measured optimum (reference §6)
                    ratio = n_p * p.gpus / (n_d * d.gpus)
                    if 1 / 16 <= ratio <= 4:
                        layouts.append(Layout(decode=d, n_d=n_d, prefill=p, n_p=n_p))
    return layouts

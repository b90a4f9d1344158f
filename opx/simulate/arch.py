"""Model architecture numbers the simulator needs, derived from the catalog entry (models.LLM) plus a
small table of attention details the catalog does not carry (heads, head sizes, caps).

Derivations (docs/simulator.md, "Model accounting"):
- MoE: total = NR + E * P_e and active = NR + k * P_e, where P_e is the parameters of one routed
  expert summed over the MoE layers and NR the non-routed parameters (attention, dense layers,
  shared experts, embeddings, head). So P_e = (total - active) / (E - k), NR = active - k * P_e.
  DeepSeek-V3: P_e = 2.56 B, NR = 16.5 B (reference §4: ~16 B); V4-Flash: P_e = 1.08 B, NR = 6.5 B.
- Dense models: NR = total, no experts.
- Attention FLOPs per query token are `fixed + pair * min(ctx, cap) + index_pair * ctx`, summed over
  layers; KV bytes read per decode step per sequence are `kv_fixed + kv_bytes_per_token * ctx_read`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from models import LLM


@dataclass(frozen=True)
class Arch:
    slug: str
    layers: int
    moe_layers: int
    hidden: int
    experts: int
    top_k: int
    nr_params: float              # non-routed parameters (all layers, embeddings, head)
    expert_params: float          # one routed expert, summed over the MoE layers
    active_params: float
    total_params: float
    mtp_layers: int
    # attention, decode (absorbed form for MLA), FLOPs per query token, summed over layers
    attn_fixed_flops: float
    attn_pair_flops: float        # per attended context token
    attn_ctx_cap: float           # core attention attends at most this many tokens (inf = all)
    attn_index_flops: float       # per context token, not capped (DSA / CSA indexers)
    # attention, prefill: FLOPs per (query, key) pair summed over layers (causal handled outside)
    prefill_pair_flops: float
    # KV cache
    kv_bytes_per_token: float     # as stored at kv_dtype (all layers)
    kv_dtype: str
    kv_fixed_bytes: float         # per sequence (sliding windows, compressor state)
    kv_read_cap: float            # decode reads at most this many tokens of the main KV (inf = all)
    kv_index_bytes_per_token: float  # read for every context token even beyond the cap
    kv_shards_over_tp: int        # how many TP ranks the KV is split over at most (1 = replicated: MLA)
    native_fp4_experts: bool      # the checkpoint ships FP4 experts (V4, gpt-oss)
    source: str

    def as_dict(self) -> dict:
        return asdict(self)


INF = float("inf")

# MLA decode (absorbed): per context token per layer 2H(d_c + d_r) + 2H d_c (QK over the latent plus
# rope, then PV over the latent); prefill (not absorbed): 2H (d_qk + d_v) = 2H (192 + 128).
def _mla(h: int) -> tuple[float, float]:
    return 2 * h * (512 + 64) + 2 * h * 512, 2 * h * (192 + 128)


# Attention facts per catalog slug (reference serving-performance-models.md §4): heads, head dims.
# kv_bf16: the catalog's kv_bytes_per_token is at BF16 (its note says so); the engine serves the KV
# cache in FP8 by default (KV_DTYPE), as TensorRT-LLM and SGLang do for DeepSeek on Hopper/Blackwell.
_TABLE: dict[str, dict] = {
    "deepseek-r1": {"kind": "mla", "heads": 128, "dense_layers": 3, "kv_bf16": True},
    "deepseek-v3": {"kind": "mla", "heads": 128, "dense_layers": 3, "kv_bf16": True},
    "deepseek-v3.2": {"kind": "dsa", "heads": 128, "dense_layers": 3},
    "kimi-k2.5": {"kind": "mla", "heads": 64, "dense_layers": 1, "kv_bf16": True},
    "deepseek-v4-flash": {"kind": "csa", "heads": 64, "dense_layers": 0},
    "deepseek-v4.1-flash": {"kind": "csa", "heads": 64, "dense_layers": 0},
    "deepseek-v4-pro": {"kind": "csa", "heads": 128, "dense_layers": 0},
    "gpt-oss-120b": {"kind": "gqa", "heads": 64, "kv_heads": 8, "head_dim": 64, "swa_fraction": 0.5,
                     "window": 128, "native_fp4": True, "kv_bf16": True},
    "llama-3.3-70b": {"kind": "gqa", "heads": 64, "kv_heads": 8, "head_dim": 128, "kv_bf16": True},
}


KV_DTYPE = "fp8"


def attention_heads(slug: str) -> int:
    """Attention heads of a model in the table (TP sizes must divide them), or 0 when unknown."""
    return int(_TABLE.get(slug, {}).get("heads", 0))


def arch_for(llm: LLM, kv_dtype: str = KV_DTYPE) -> Arch:
    """kv_dtype: "fp8" (default) or "bf16", the KV-cache precision served."""
    t = _TABLE.get(llm.slug)
    attention = llm.attention.upper()
    if t is None:   # not in the table: infer the attention kind from the catalog's word
        kind = ("csa" if "CSA" in attention else "dsa" if "DSA" in attention
                else "mla" if "MLA" in attention else "gqa")
        t = {"kind": kind, "heads": max(8, llm.hidden_size // 56), "kv_heads": 8,
             "head_dim": 128, "dense_layers": 0, "inferred": True}
    L = llm.layers
    E, k = llm.experts, llm.top_k
    total, active = llm.total_params_b * 1e9, llm.active_params_b * 1e9
    if E > k > 0:
        p_e = (total - active) / (E - k)
        nr = active - k * p_e
        moe_layers = L - t.get("dense_layers", 0)
    else:
        p_e, nr, moe_layers, E, k = 0.0, total, 0, 0, 0
    kind = t["kind"]
    H = t["heads"]
    kv_fixed, kv_cap, kv_index, kv_shards = 0.0, INF, 0.0, 1
    attn_fixed, attn_cap, attn_index = 0.0, INF, 0.0
    if kind == "mla":
        pair, pre = _mla(H)
        pair, pre = pair * L, pre * L
    elif kind == "dsa":
        # V3.2: core attention over at most 2,048 selected tokens; the indexer (64 heads x 128,
        # FP8) scores every context token; KV read = 2,048 latents + 132 B index key per token/layer.
        pair, pre = _mla(H)
        pair, pre = pair * L, pre * L
        attn_cap, attn_index = 2048.0, 2 * 64 * 128 * L
        kv_cap, kv_index = 2048.0, 132.0 * L
    elif kind == "csa":
        # V4: MQA over compressed entries, head_dim 512, SWA 128 on every layer. Half the layers
        # are CSA (compress 4, indexer top-512 of the compressed entries), half HCA (compress 128,
        # all compressed entries). Per query token per layer, averaged over the two kinds:
        # fixed = (640 + 128)/2 entries x 4 H 512; per context token = (indexer 2*64*128/4 +
        # 4 H 512/128)/2. KV: the catalog's asymptotic bytes per token plus a fixed 2.8 MB
        # (V4-Flash) / 4 MB (V4-Pro) of window and compressor state per sequence.
        per_entry = 4 * H * 512
        attn_fixed = L * (640 + 128) / 2 * per_entry
        pair = L * (2 * 64 * 128 / 4 + per_entry / 128) / 2
        pre = pair
        kv_fixed = 4.0e6 if H >= 128 else 2.8e6
    else:  # gqa
        hd, kvh = t.get("head_dim", 128), t.get("kv_heads", 8)
        swa = t.get("swa_fraction", 0.0)
        full_layers = L * (1 - swa)
        pair = 4 * H * hd * full_layers
        attn_fixed = 4 * H * hd * L * swa * t.get("window", 0)
        pre = pair
        kv_shards = kvh
        kv_fixed = L * swa * t.get("window", 0) * 2 * kvh * hd * 2
    kv_scale = 1.0
    if kv_dtype == "fp8" and t.get("kv_bf16"):
        kv_scale = 0.5
    elif kv_dtype == "bf16" and not t.get("kv_bf16") and kind in ("dsa", "csa"):
        kv_scale = 2.0
    kv_per_token = llm.kv_bytes_per_token * kv_scale
    kv_fixed, kv_index = kv_fixed * kv_scale, kv_index * kv_scale
    source = ("derived from the catalog entry (total/active params, layers, experts, KV bytes) and "
              "the attention table in opx/simulate/arch.py (serving-performance-models.md §4)")
    if t.get("inferred"):
        source += "; attention details INFERRED (model not in the table): heads = hidden/56"
    return Arch(slug=llm.slug, layers=L, moe_layers=moe_layers, hidden=llm.hidden_size, experts=E,
                top_k=k, nr_params=nr, expert_params=p_e, active_params=active,
                total_params=total, mtp_layers=llm.mtp_layers, attn_fixed_flops=attn_fixed,
                attn_pair_flops=pair, attn_ctx_cap=attn_cap, attn_index_flops=attn_index,
                prefill_pair_flops=pre, kv_bytes_per_token=float(kv_per_token), kv_dtype=kv_dtype,
                kv_fixed_bytes=kv_fixed, kv_read_cap=kv_cap, kv_index_bytes_per_token=kv_index,
                kv_shards_over_tp=kv_shards,
                native_fp4_experts=bool(t.get("native_fp4", kind == "csa")), source=source)

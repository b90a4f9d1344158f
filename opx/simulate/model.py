"""The serving model, vectorized with numpy over rows (configuration x concurrency).

Every function takes `c`, a namespace of equal-length arrays (one entry per row; built by `rows`),
`a`, the model's Arch (one per call), and `e`, the efficiency factors (arrays per row or scalars).
Units: seconds, bytes, FLOP, tokens. Formulas: docs/simulator.md.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from opx.simulate.arch import Arch

# Fixed modelling constants (assumptions, docs/simulator.md "Parameters and assumptions").
PREFILL_BATCH_TOKENS = 16384     # tokens one attention rank prefills per batch (max_num_batched_tokens)
ACT_BYTES = 2                    # activations in BF16 for all-reduce
DISPATCH_BYTES, COMBINE_BYTES = 1, 2   # EP dispatch in FP8, combine in BF16 (DeepEP practice)
SCALE_OUT_ALPHA_MULT = 4.0       # a collective over the scale-out network has 4x the fixed latency
P2P_ALPHA_S = 10e-6              # pipeline-parallel hand-off latency (AIConfigurator's 10 us)
FP4_BYTES = 0.5625               # NVFP4: 4 bits + one FP8 scale per 16 values
PREFILL_NET_ETA = 0.7            # prefill collectives move large messages: 70% of the link (assumed)
WAVE_WINDOW = 0.2                # a priori: output lengths drawn in [0.8 L, L] spread a wave over 0.2 L


@dataclass(frozen=True)
class ModelOptions:
    """Structural choices of the serving model. The defaults are the engine's; the other values are
    earlier versions' forms, kept so the ablation runner (`ablation_variants` in
    opx/simulate/calibration.py) can measure what each choice is worth. Passed to `evaluate`."""
    # prefill queue: "md1" (0.1.0-0.3.0 and since 0.4.1: q_wait x S_full x u/(1-u), fitted q_wait,
    # plus the chunked-prefill iteration wait) or "batch" (0.4.0 only: a batch-service queue; a
    # request waits half the running batch on average, then its own batch, whose length grows with
    # the requests that arrived meanwhile: no fitted constant). 0.4.1 went back to "md1": "batch"
    # gained nothing in held-out TTFT and worsened held-out TPOT per system (docs/simulator.md).
    queue_form: str = "md1"
    # batch queue only: "rate" (a batch is running with probability min(lam (S1 + t_it) / n, 1)) or
    # "always" (a batch is always running)
    batch_busy: str = "rate"
    # chunked prefill in aggregated engines (M/D/1 queue): a new request waits for the running
    # iteration (half a decode step on average) and its prefill chunk shares an iteration with one
    # decode step: + 1.5 T_step (0.3.0; 0.0 is 0.2.0's TTFT)
    iter_wait: float = 1.5
    # closed-loop TTFT burst: "drain" (0.2.0 on: burst x C s_req / n_pf), "wave" (0.3.0 trial:
    # requests return in waves spread over WAVE_WINDOW x the decode time, burst x drain^2 / (drain +
    # window)) or "hinge" (0.3.0 trial: burst x max(drain - window, 0)); "wave" and "hinge" add no
    # iteration wait
    burst_form: str = "drain"
    # closed-loop bound on TTFT (0.4.0 on): no request waits for more than the other C - 1
    # requests' prefills (each alone) and, when the decode pool is full, the decode lifetimes ahead
    ttft_bound: bool = True

    def __post_init__(self):
        for name, allowed in (("queue_form", ("md1", "batch")), ("batch_busy", ("rate", "always")),
                              ("burst_form", ("drain", "wave", "hinge"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} {getattr(self, name)!r}: use one of {allowed}")


ENGINE_OPTIONS = ModelOptions()


@dataclass
class Eff:
    """Efficiency factors and fixed costs (fitted: opx/simulate/calibration.py)."""
    eta_m: object = 0.75          # achieved fraction of HBM bandwidth
    eta_c: object = 0.5           # achieved fraction of dense tensor peak, decode GEMMs/attention
    t_layer: object = 20e-6       # fixed cost per layer per step (kernel launches, syncs), s
    eta_cp: float = 0.5           # achieved fraction of tensor peak in prefill
    eta_n: float = 0.6            # achieved fraction of scale-up bandwidth per direction
    alpha_ar: float = 8e-6        # fixed latency of one all-reduce, s
    alpha_a2a: float = 15e-6      # fixed latency of one dispatch or combine phase, s
    t_step: float = 1e-3          # fixed cost per step (scheduler, sampling), s
    q_wait: float = 0.5           # TTFT: coefficient of the rho/(1-rho) queueing term
    burst_agg: float = 0.2        # TTFT: closed-loop bursts, W = burst x C s_req / n_prefill (agg)
    burst_disagg: float = 0.2     # same for disaggregated prefill pools
    ttft_fixed_agg: float = 0.05  # TTFT: fixed latency (HTTP, tokenizer, scheduler), s
    ttft_fixed_disagg: float = 0.1  # same with the extra hops of disaggregation, s
    t_req: float = 0.0            # TTFT, aggregated: host-side cost per request in flight on the
                                  # engine that also prefills (streaming, detokenization,
                                  # scheduler bookkeeping), s per request


ROW_FIELDS = ("bw", "p_e", "p_nr", "p_att", "link", "domain", "scale_out", "hbm",
              "s_nr", "s_e", "d_tp", "d_dp", "d_ep", "d_moetp", "d_pp", "n_d",
              "p_tp", "p_dp", "p_ep", "p_moetp", "n_p", "agg", "isl", "osl", "hit", "conc",
              "m", "p_acc")


def rows(**kw) -> SimpleNamespace:
    """Broadcast keyword arrays to one length; every ROW_FIELDS entry must be given."""
    missing = [f for f in ROW_FIELDS if f not in kw]
    if missing:
        raise TypeError(f"missing row fields: {missing}")
    arrs = np.broadcast_arrays(*[np.asarray(kw[f], dtype=float) for f in ROW_FIELDS])
    return SimpleNamespace(**{f: np.array(v, dtype=float) for f, v in zip(ROW_FIELDS, arrs)})


# -- pieces ------------------------------------------------------------------------------------

def tokens_per_step(m, p):
    """MTP: expected tokens emitted per verify step with m drafts of constant acceptance p:
    tau = 1 + p + ... + p^m = (1 - p^(m+1)) / (1 - p)."""
    m, p = np.asarray(m, float), np.asarray(p, float)
    p = np.clip(p, 0.0, 0.999999)
    return np.where(m > 0, (1 - p ** (m + 1)) / (1 - p), 1.0)


def touched_fraction(tokens, experts, top_k):
    """Expected share of the E experts that at least one of `tokens` routed tokens selects,
    uniform routing: 1 - (1 - k/E)^T."""
    if experts <= 0:
        return np.zeros_like(np.asarray(tokens, float))
    return 1.0 - (1.0 - top_k / experts) ** np.asarray(tokens, float)


def distinct_ranks(ep, top_k):
    """Expected distinct EP ranks among one token's k experts: ep (1 - (1 - 1/ep)^k)."""
    ep = np.asarray(ep, float)
    return np.where(ep > 1, ep * (1 - (1 - 1 / np.maximum(ep, 1)) ** top_k), 1.0)


def moe_exchange_bytes(tokens, ep, moetp, gpus, top_k, hidden):
    """Bytes one GPU sends per MoE layer when attention is data-parallel: each token goes to the
    distinct EP ranks holding its experts, times the MoE-TP group (every MoE-TP rank needs the
    token), dispatch in FP8 and combine in BF16, less the share that stays local."""
    dest = np.minimum(distinct_ranks(ep, top_k) * moetp, gpus)
    return tokens * dest * hidden * (DISPATCH_BYTES + COMBINE_BYTES) * (gpus - 1) / gpus


def kv_read_bytes(a: Arch, ctx):
    """KV bytes one decode step reads for one sequence with `ctx` tokens of context."""
    ctx = np.asarray(ctx, float)
    main = a.kv_bytes_per_token - a.kv_index_bytes_per_token
    return a.kv_fixed_bytes + main * np.minimum(ctx, a.kv_read_cap) + a.kv_index_bytes_per_token * ctx


def kv_seq_bytes(a: Arch, tokens):
    """KV bytes stored for one sequence of `tokens` tokens."""
    return a.kv_fixed_bytes + a.kv_bytes_per_token * np.asarray(tokens, float)


def attn_flops_decode(a: Arch, ctx):
    ctx = np.asarray(ctx, float)
    return a.attn_fixed_flops + a.attn_pair_flops * np.minimum(ctx, a.attn_ctx_cap) + a.attn_index_flops * ctx


def attn_flops_prefill(a: Arch, new, prefix):
    """Attention FLOPs to prefill `new` tokens after `prefix` cached ones (causal)."""
    new, prefix = np.asarray(new, float), np.asarray(prefix, float)
    mean_ctx = prefix + new / 2
    return new * (a.attn_fixed_flops + a.prefill_pair_flops * np.minimum(mean_ctx, a.attn_ctx_cap)
                  + a.attn_index_flops * mean_ctx)


def weights_per_gpu(a: Arch, c, tp, ep, moetp, pp):
    """Weight bytes resident on one GPU: non-routed sharded over attention TP (replicated under
    attention DP), experts spread over EP and split over MoE-TP, layers over PP."""
    return (a.nr_params * c.s_nr / tp + (a.experts / np.maximum(ep, 1)) * a.expert_params * c.s_e
            / np.maximum(moetp, 1)) / pp


def kv_capacity(a: Arch, c, ctx_tokens):
    """Most sequences one decode instance can hold (KV at full length `ctx_tokens`), and the KV
    budget per GPU in bytes (negative: the weights do not fit)."""
    from opx.simulate.hardware import HBM_RESERVE_GB, HBM_USABLE
    w = weights_per_gpu(a, c, c.d_tp, c.d_ep, c.d_moetp, c.d_pp)
    budget = c.hbm * HBM_USABLE - HBM_RESERVE_GB * 1e9 - w
    shard = np.minimum(c.d_tp, a.kv_shards_over_tp)
    per_seq = kv_seq_bytes(a, ctx_tokens) / shard / c.d_pp    # per GPU of the rank
    return np.maximum(budget, 0) / per_seq * c.d_dp, budget


def _link(c, gpus):
    inside = gpus <= c.domain
    return np.where(inside, c.link, c.scale_out), np.where(inside, 1.0, SCALE_OUT_ALPHA_MULT)


def _roof(flops, peak, eta_c, nbytes, bw, eta_m):
    tc = flops / (peak * eta_c)
    tm = nbytes / (bw * eta_m)
    return np.maximum(tc, tm), tc >= tm


def decode_step(B, ctx, c, a: Arch, e: Eff) -> dict:
    """One decode step of an instance holding B sequences (mean context ctx). Returns the step
    time and its breakdown (memory-bound ops, compute-bound ops, communication, fixed overhead)."""
    tp, dp, ep, moetp, pp = c.d_tp, c.d_dp, c.d_ep, c.d_moetp, c.d_pp
    q_mult = 1.0 + c.m
    lay = (a.layers + c.m) / a.layers               # MTP modules priced as one layer each
    Bm = B / pp                                     # sequences per micro-batch
    b_rank = np.maximum(Bm / dp, 1.0)               # the busiest attention rank has >= 1
    q_rank = b_rank * q_mult
    T = np.maximum(Bm, 1.0) * q_mult                # tokens through the instance's MoE
    k = a.top_k
    # bytes per GPU per stage
    w_nr = a.nr_params * c.s_nr / tp / pp
    w_e = ((a.experts / ep) * touched_fraction(T, a.experts, k) * a.expert_params * c.s_e
           / moetp / pp)
    kv = b_rank * kv_read_bytes(a, ctx) / np.minimum(tp, a.kv_shards_over_tp) / pp
    # FLOPs per GPU per stage
    f_nr = 2 * q_rank * a.nr_params / tp / pp
    f_e = 2 * T * k * a.expert_params / (ep * moetp) / pp
    f_att = q_rank * attn_flops_decode(a, ctx) / tp / pp
    t_nr, c_nr = _roof(f_nr, c.p_nr, e.eta_c, w_nr, c.bw, e.eta_m)
    t_e, c_e = _roof(f_e, c.p_e, e.eta_c, w_e, c.bw, e.eta_m)
    t_at, c_at = _roof(f_att, c.p_att, e.eta_c, kv, c.bw, e.eta_m)
    t_cmp = (np.where(c_nr, t_nr, 0) + np.where(c_e, t_e, 0) + np.where(c_at, t_at, 0)) * lay
    t_mem = (np.where(c_nr, 0, t_nr) + np.where(c_e, 0, t_e) + np.where(c_at, 0, t_at)) * lay
    # communication per stage
    G = tp * dp * pp
    link, amult = _link(c, G)
    layers_stage = a.layers / pp * lay
    moe_stage = a.moe_layers / pp * lay
    ar = np.where(tp > 1, 2 * (e.alpha_ar * amult + 2 * (tp - 1) / tp * q_rank * a.hidden * ACT_BYTES
                               / (link * e.eta_n)), 0.0) * layers_stage
    use_a2a = (dp > 1) & (a.experts > 0)
    a2a_bytes = moe_exchange_bytes(q_rank, ep, moetp, tp * dp, k, a.hidden)
    a2a = np.where(use_a2a, 2 * e.alpha_a2a * amult + a2a_bytes / (link * e.eta_n), 0.0) * moe_stage
    p2p = np.where(pp > 1, (pp - 1) * (P2P_ALPHA_S + q_rank * a.hidden * ACT_BYTES / c.scale_out), 0)
    t_comm = (ar + a2a) * pp + p2p
    t_ovh = e.t_layer * a.layers * lay + e.t_step
    t_mem, t_cmp = t_mem * pp, t_cmp * pp
    return {"t_step": t_mem + t_cmp + t_comm + t_ovh, "t_mem": t_mem, "t_compute": t_cmp,
            "t_comm": t_comm, "t_overhead": t_ovh}


def prefill_batch_time(j, c, a: Arch, e: Eff):
    """Time for one prefill instance (layout p_*) to prefill j requests together."""
    tp, dp, ep, moetp = c.p_tp, c.p_dp, c.p_ep, c.p_moetp
    G = tp * dp
    n = c.isl * (1 - c.hit)                          # new tokens after prefix-cache hits
    pre = c.isl * c.hit
    r = np.maximum(j / dp, 1.0)                      # requests on the busiest rank
    tok_rank = r * n
    tok_inst = np.maximum(j, 1.0) * n
    k = a.top_k
    w_nr = a.nr_params * c.s_nr / tp
    w_e = (a.experts / ep) * touched_fraction(tok_inst, a.experts, k) * a.expert_params * c.s_e / moetp
    kv = r * kv_read_bytes(a, pre + n) / np.minimum(tp, a.kv_shards_over_tp)
    f_nr = 2 * tok_rank * a.nr_params / tp
    f_e = 2 * tok_inst * k * a.expert_params / G
    f_at = r * attn_flops_prefill(a, n, pre) / tp
    t = (_roof(f_nr, c.p_nr, e.eta_cp, w_nr, c.bw, e.eta_m)[0]
         + _roof(f_e, c.p_e, e.eta_cp, w_e, c.bw, e.eta_m)[0]
         + _roof(f_at, c.p_att, e.eta_cp, kv, c.bw, e.eta_m)[0])
    link, amult = _link(c, G)
    ar = np.where(tp > 1, 2 * (e.alpha_ar * amult + 2 * (tp - 1) / tp * tok_rank * a.hidden * ACT_BYTES
                               / (link * PREFILL_NET_ETA)), 0.0) * a.layers
    use_a2a = (dp > 1) & (a.experts > 0)
    a2a = np.where(use_a2a, 2 * e.alpha_a2a * amult + moe_exchange_bytes(tok_rank, ep, moetp, G, k, a.hidden)
                   / (link * PREFILL_NET_ETA), 0.0) * a.moe_layers
    return t + ar + a2a + e.t_layer * a.layers + e.t_step


def batch_queue_terms(S1, S0, t_it, busy):
    """Batch-service prefill queue (0.4.0). A batch's length is S0 + t_it + j s_m (S0: the fixed
    part of a prefill batch, t_it: the decode step an aggregated engine's iteration also carries,
    s_m = S1 - S0 per request); a request finds a batch running with probability `busy` and then
    waits half of it on average before its own batch starts:
        TTFT_prefill = (1 + busy/2) (S1 + t_it + (S0 + t_it) u/(1-u))
    (the batch's fixed part is stretched by the requests arriving meanwhile, u = lambda s_m / n).
    Returns (extra time at u = 0 over S1, coefficient of u/(1-u)) for the closed-loop solver."""
    k = 1.0 + 0.5 * busy
    return k * (S1 + t_it) - S1, k * (S0 + t_it)


def _solve_rate(A, Q, lam_max, C):
    """Closed loop: the request rate lam with lam (A + Q u / (1 - u)) = C, u = lam / lam_max,
    i.e. the root in (0, lam_max) of lam^2 (Q - A)/lam_max + lam (A + C/lam_max) - C = 0."""
    a2 = (Q - A) / lam_max
    a1 = A + C / lam_max
    disc = np.maximum(a1 * a1 + 4 * a2 * C, 0.0)
    return 2 * C / (a1 + np.sqrt(disc))


def evaluate(c, a: Arch, e: Eff, iterations: int = 4, breakdown: bool = True,
             options: ModelOptions = ENGINE_OPTIONS) -> dict:
    """Closed-loop operating point of every row: TPOT, TTFT, request rate and throughputs, with the
    model's structural `options` (the engine's unless an ablation asks otherwise)."""
    isl, osl, C = c.isl, c.osl, c.conc
    n_new = isl * (1 - c.hit)
    ctx = isl + osl / 2                                   # mean context during decode
    tau = tokens_per_step(c.m, c.p_acc)
    cap, budget = kv_capacity(a, c, isl + osl)            # sequences per decode instance
    # prefill service: one request alone, and the per-request cost at full batches
    S1 = prefill_batch_time(np.ones_like(C), c, a, e)
    j_full = np.maximum(np.floor(PREFILL_BATCH_TOKENS * c.p_dp / np.maximum(n_new, 1)), 1.0)
    S_full = prefill_batch_time(j_full, c, a, e)
    s_req = S_full / j_full                               # instance-seconds per request
    agg = c.agg > 0
    n_pf = np.where(agg, c.n_d, c.n_p)
    lam_max = n_pf / s_req                                # prefill-bound request rate
    Gd = c.d_tp * c.d_dp * c.d_pp
    link, _ = _link(c, np.where(agg, Gd, 1e9))            # KV hand-off crosses pools
    xfer = np.where(agg, 0.0, isl * a.kv_bytes_per_token / link)
    # closed-loop bursts: requests finish (and return) in partly synchronized waves, so a new request
    # finds others queued for prefill: the wait is a share of the time to prefill every in-flight
    # request once (C s_req / n_pf). A burst-free M/D/1 queue alone misses measured TTFT by 2-5x.
    # Aggregated engines add a host-side cost per request in flight (t_req x C per instance): the
    # process that schedules the new prefill is also streaming every running request.
    drain = C * s_req / n_pf
    b_fw = np.where(agg, e.burst_agg, e.burst_disagg)
    fixed = np.where(agg, e.t_req * C / c.n_d + e.ttft_fixed_agg, e.ttft_fixed_disagg)

    def burst_of(tpot):
        if options.burst_form == "wave":
            w = WAVE_WINDOW * (osl - 1) * tpot
            return b_fw * drain * drain / (drain + w) + fixed
        if options.burst_form == "hinge":
            w = WAVE_WINDOW * (osl - 1) * tpot
            return b_fw * np.maximum(drain - w, 0.0) + fixed
        if options.queue_form == "batch":   # the iteration wait is inside the batch-service queue
            return b_fw * drain + fixed
        return b_fw * drain + fixed + np.where(agg, options.iter_wait * tpot * tau, 0.0)

    # batch-service queue: a batch of j requests takes S(j) = S0 + j s_m (S0: weight reads, per-layer
    # and per-step costs; s_m: the marginal request), interpolated between S1 and S_full; aggregated
    # engines prefill inside a decode iteration, so their batch also carries one decode step.
    s_m = np.where(j_full > 1, (S_full - S1) / np.maximum(j_full - 1, 1), S1)
    S0 = np.maximum(S1 - s_m, 0.0)

    def queue_of(tpot, lam_prev):
        """(extra TTFT at u = 0, coefficient of u/(1-u)) of the prefill queue."""
        if options.queue_form == "batch":
            t_it = np.where(agg, tpot * tau, 0.0)
            busy = np.minimum(lam_prev * (S1 + t_it) / n_pf, 1.0)  # chance a batch is running
            if options.batch_busy == "always":
                busy = np.ones_like(busy)
            return batch_queue_terms(S1, S0, t_it, busy)
        return 0.0 * S1, e.q_wait * S_full

    burst = burst_of(0.0)
    B = np.minimum(C / c.n_d, cap)
    lam = np.zeros_like(C)                                # no request rate before the first pass
    for it in range(iterations + 1):
        st = decode_step(B, ctx, c, a, e)
        tpot = st["t_step"] / tau
        burst = burst_of(tpot)
        q0, qc = queue_of(tpot, lam)
        A = S1 + xfer + burst + q0 + (osl - 1) * tpot
        Q = np.where(agg, qc + (osl - 1) * tpot, qc)
        lam = _solve_rate(A, Q, lam_max, C)
        u = lam / lam_max
        tpot_eff = np.where(agg, tpot / np.maximum(1 - u, 1e-9), tpot)
        if it == iterations:
            break
        B_new = np.minimum(lam * (osl - 1) * tpot_eff / c.n_d, cap)
        B = B_new if it == 0 else 0.5 * (B + B_new)
    # decode slots full (KV capacity): the decode pool sets the rate, the rest waits for a slot
    need = lam * (osl - 1) * tpot_eff / c.n_d
    kv_bound = need > cap * 1.0001
    X = c.n_d * cap / np.maximum((osl - 1) * tpot, 1e-12)
    lam_kv = np.where(agg, X / (1 + X / lam_max), np.minimum(X, lam))
    lam = np.where(kv_bound, lam_kv, lam)
    u = lam / lam_max
    tpot_eff = np.where(agg, tpot / np.maximum(1 - u, 1e-9), tpot)
    ttft = C / np.maximum(lam, 1e-12) - (osl - 1) * tpot_eff   # Little's law
    ttft = np.maximum(ttft, S1 + xfer)
    if options.ttft_bound:
        # closed loop: at most C - 1 other requests are in the system. A new request can wait for
        # each of their prefills (served one at a time: S1 each, batching only helps) and, if the
        # decode pool holds fewer than C sequences, for the decode lifetimes ahead of it.
        slots = np.maximum(c.n_d * np.floor(cap), 0.0)
        rounds = np.where(slots >= 1, np.ceil(np.maximum(C - slots, 0.0) / np.maximum(slots, 1.0)), C - 1)
        bound = (burst + S1 + xfer + np.maximum(C - 1, 0.0) * S1 / n_pf
                 + rounds * (osl - 1) * tpot_eff)
        capped = ttft > bound
        ttft = np.where(capped, bound, ttft)
        lam = np.where(capped, C / np.maximum(bound + (osl - 1) * tpot_eff, 1e-12), lam)
    gpus = np.where(agg, c.n_d * Gd, c.n_d * Gd + c.n_p * c.p_tp * c.p_dp)
    e2e = ttft + (osl - 1) * tpot_eff
    comps = {k: st[k] for k in ("t_mem", "t_compute", "t_comm", "t_overhead")}
    out = {
        "tpot": tpot_eff, "ttft": ttft, "e2e": e2e, "rate": lam, "gpus": gpus,
        "batch_per_instance": B, "capacity_per_instance": cap, "kv_budget": budget,
        "prefill_util": u, "tau": tau, "s1": S1, "kv_bound": kv_bound,
        "thr_output": lam * osl / gpus, "thr_input": lam * isl / gpus,
        "t_step": st["t_step"], **comps,
    }
    if not breakdown:
        return out
    stack = np.vstack([comps["t_mem"], comps["t_compute"], comps["t_comm"], comps["t_overhead"]])
    names = np.array(["memory", "compute", "communication", "overhead"])
    binding = names[np.argmax(stack, axis=0)].astype(object)
    binding = np.where(u > 0.9, "prefill", binding)
    binding = np.where(kv_bound, "kv_capacity", binding)
    out["binding"] = binding
    return out

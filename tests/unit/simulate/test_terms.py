"""Each term of the serving model against hand-computed values (docs/simulator.md)."""
import numpy as np
import pytest

from opx.simulate import model as M
from opx.simulate.arch import arch_for
from opx.simulate.calibration import hw_rows
from opx.simulate.hardware import hw_spec

R1_NR = 37e9 - 8 * (671e9 - 37e9) / 248          # 16.548 B non-routed params
R1_PE = (671e9 - 37e9) / 248                      # 2.5565 B per routed expert (all MoE layers)


@pytest.fixture(scope="module")
def r1(catalog):
    return arch_for(catalog.models["deepseek-r1"])


def _row(catalog, hw="h200", precision="fp8", **kw):
    spec = hw_spec(catalog.hardware[hw])
    base = dict(d_tp=8, d_dp=1, d_ep=1, d_moetp=8, d_pp=1, n_d=1, p_tp=8, p_dp=1, p_ep=1, p_moetp=8,
                n_p=1, agg=1, isl=1000, osl=100, hit=0.0, conc=1, m=0, p_acc=0.0)
    base.update(kw)
    return M.rows(**hw_rows([spec], [precision]), **base)


IDEAL = M.Eff(eta_m=1.0, eta_c=1.0, t_layer=0.0, eta_cp=1.0, eta_n=1.0, alpha_ar=0.0, alpha_a2a=0.0,
              t_step=0.0, q_wait=0.0, burst_agg=0.0, burst_disagg=0.0, ttft_fixed_agg=0.0,
              ttft_fixed_disagg=0.0)


def test_model_accounting(r1):
    assert r1.nr_params == pytest.approx(R1_NR)            # reference §4: ~16 B
    assert r1.expert_params == pytest.approx(R1_PE)
    assert r1.moe_layers == 58
    assert r1.kv_bytes_per_token == 70272 / 2             # FP8 KV: half the catalog's BF16 figure
    # absorbed MLA decode: 2H(512 + 64) + 2H 512 per context token per layer, 61 layers
    assert r1.attn_pair_flops == 61 * (2 * 128 * 576 + 2 * 128 * 512)


def test_mtp_tokens_per_step():
    assert M.tokens_per_step(0, 0.8) == 1.0
    assert M.tokens_per_step(1, 0.8) == pytest.approx(1.8)
    assert M.tokens_per_step(3, 0.8) == pytest.approx(1 + 0.8 + 0.64 + 0.512)


def test_touched_experts():
    # reference §5.2: 256-choose-8, 4 tokens touch ~30 experts, >= 128 tokens nearly all
    assert 256 * M.touched_fraction(4, 256, 8) == pytest.approx(256 * (1 - (1 - 8 / 256) ** 4))
    assert 29 < 256 * M.touched_fraction(4, 256, 8) < 31
    assert 256 * M.touched_fraction(128, 256, 8) > 250


def test_ep_exchange_bytes():
    # one token, EP8: expected distinct ranks 8(1 - (7/8)^8) = 5.25; FP8 dispatch + BF16 combine,
    # 7/8 of it leaves the GPU
    ranks = 8 * (1 - (7 / 8) ** 8)
    assert M.distinct_ranks(8, 8) == pytest.approx(ranks)
    assert M.moe_exchange_bytes(1, 8, 1, 8, 8, 7168) == pytest.approx(ranks * 7168 * 3 * 7 / 8)
    # attention DP over 8 with MoE TP8 (no EP): every rank needs every token
    assert M.moe_exchange_bytes(1, 1, 8, 8, 8, 7168) == pytest.approx(8 * 7168 * 3 * 7 / 8)


def test_decode_step_memory_and_allreduce(catalog, r1):
    """H200 TP8, DeepSeek-R1 FP8, one sequence at context 1,000, ideal efficiencies."""
    c = _row(catalog)
    st = M.decode_step(np.array([1.0]), np.array([1000.0]), c, r1, IDEAL)
    w_nr = R1_NR / 8                                  # non-routed weights sharded over TP8
    w_e = 8 * R1_PE / 8                               # 8 experts touched, each split over MoE-TP8
    kv = 1000 * 35136                                  # MLA latent is replicated on every TP rank
    t_mem = (w_nr + w_e + kv) / 4.8e12
    ar = 61 * 2 * (2 * 7 / 8 * 7168 * 2 / 450e9)       # 2 all-reduces per layer, 450 GB/s per dir
    assert st["t_mem"][0] == pytest.approx(t_mem, rel=1e-6)
    assert st["t_comm"][0] == pytest.approx(ar, rel=1e-6)
    assert st["t_overhead"][0] == 0
    assert st["t_step"][0] == pytest.approx(t_mem + ar + st["t_compute"][0], rel=1e-9)


def test_decode_step_compute_bound_at_large_batch(catalog, r1):
    """DEP8 with 2,048 sequences per GPU: expert GEMMs are compute-bound on the FP8 peak."""
    c = _row(catalog, d_tp=1, d_dp=8, d_ep=8, d_moetp=1)
    st = M.decode_step(np.array([8 * 2048.0]), np.array([1000.0]), c, r1, IDEAL)
    f_e = 2 * 8 * 2048 * 8 * R1_PE / 8                  # all instance tokens x k, spread over 8 GPUs
    assert st["t_compute"][0] >= f_e / 1.979e15


def test_kv_capacity(catalog, r1):
    c = _row(catalog)
    cap, budget = M.kv_capacity(r1, c, 2048)
    weights = (R1_NR + 256 * R1_PE) / 8
    expect_budget = 141 * 2**30 * 0.96 - 2e9 - weights      # 0.4.0: 141 GiB, as the runtime sees it
    assert budget[0] == pytest.approx(expect_budget)
    assert cap[0] == pytest.approx(expect_budget / (35136 * 2048))


def test_closed_loop_rate_solves_littles_law():
    A, Q, lam_max, C = np.array([2.0]), np.array([0.5]), np.array([100.0]), np.array([64.0])
    lam = M._solve_rate(A, Q, lam_max, C)
    u = lam / lam_max
    assert lam * (A + Q * u / (1 - u)) == pytest.approx(C)
    assert 0 < lam[0] < lam_max[0]


def test_prefill_new_tokens_after_prefix_hits(catalog, r1):
    """Prefix hits remove GEMM work: 90% hits leave 1/10 of the new tokens to prefill."""
    full = M.prefill_batch_time(np.array([8.0]), _row(catalog, isl=8000), r1, IDEAL)
    cached = M.prefill_batch_time(np.array([8.0]), _row(catalog, isl=8000, hit=0.9), r1, IDEAL)
    assert cached[0] < full[0] / 3


def test_per_request_ttft_cost_is_aggregated_only(catalog, r1):
    """t_req adds host-side time per request in flight to an aggregated engine's TTFT only."""
    base = dict(q_wait=0.1, burst_agg=0.1, burst_disagg=0.1, ttft_fixed_agg=0.1, ttft_fixed_disagg=0.1)
    e0, e1 = M.Eff(**base), M.Eff(**base, t_req=2e-3)
    agg = _row(catalog, conc=64, osl=1000)
    dis = _row(catalog, conc=64, osl=1000, agg=0, n_p=1)
    a0, a1 = M.evaluate(agg, r1, e0)["ttft"][0], M.evaluate(agg, r1, e1)["ttft"][0]
    assert a1 > a0 + 0.05                                # ~64 x 2 ms, less closed-loop feedback
    d0, d1 = M.evaluate(dis, r1, e0)["ttft"][0], M.evaluate(dis, r1, e1)["ttft"][0]
    assert d1 == pytest.approx(d0)


def test_chunked_prefill_iteration_wait_is_aggregated_only(catalog, r1):
    """0.3.0: an aggregated engine's TTFT adds `iter_wait` decode steps (1.5: half an iteration's
    wait, then one iteration shared with decode); a disaggregated prefill pool does not."""
    assert M.ENGINE_OPTIONS.iter_wait == 1.5
    assert M.ENGINE_OPTIONS.queue_form == "md1"     # 0.4.1 (0.4.0's batch queue carried the step itself)
    e = M.Eff(q_wait=0.1, burst_agg=0.1, burst_disagg=0.1, ttft_fixed_agg=0.1, ttft_fixed_disagg=0.1)
    agg = _row(catalog, conc=1, osl=1000)      # C = 1: no queue, so no closed-loop feedback to speak of
    dis = _row(catalog, conc=1, osl=1000, agg=0, n_p=1)
    with_wait_a, with_wait_d = M.evaluate(agg, r1, e), M.evaluate(dis, r1, e)
    no_wait = M.ModelOptions(iter_wait=0.0)
    no_wait_a, no_wait_d = M.evaluate(agg, r1, e, options=no_wait), M.evaluate(dis, r1, e, options=no_wait)
    step = with_wait_a["t_step"][0]
    assert with_wait_a["ttft"][0] - no_wait_a["ttft"][0] == pytest.approx(1.5 * step, rel=0.05)
    assert with_wait_d["ttft"][0] == pytest.approx(no_wait_d["ttft"][0])


def test_runtime_memory_bytes(catalog):
    """0.4.0: GPU memory figures are binary units; the runtime-reported bytes are used."""
    assert hw_spec(catalog.hardware["b200"]).hbm_bytes == 180 * 2**30 == 193_273_528_320
    assert hw_spec(catalog.hardware["h200"]).hbm_bytes == 151_397_597_184      # AIC h200_sxm.yaml
    assert hw_spec(catalog.hardware["gb200-nvl72"]).hbm_bytes == 189_471 * 2**20 == 198_674_743_296
    assert hw_spec(catalog.hardware["vr-nvl72"]).hbm_bytes == 288e9       # no runtime figure: GB x 1e9


def test_gb200_dep4_fp8_holds_its_measured_batch(catalog, r1):
    """SGLang ran R1 FP8 with a 4-GPU decode pool (attention DP4, MoE TP4) on GB200 at C = 128,
    1k/1k. By hand: weights per GPU = NR + 256 P_e / 4 = 16.55 + 163.6 = 180.2 GB; KV budget =
    0.96 x 198.67 GB - 2 GB - 180.2 GB = 8.57 GB; one sequence of 0.9 x 2048 = 1843 tokens holds
    1843 x 35,136 B = 64.8 MB, so 132 per rank, 529 over the 4 ranks. Read as 186e9 bytes the
    budget is -3.6 GB: no room at all (0.3.0's bug)."""
    c = _row(catalog, hw="gb200-nvl72", d_tp=1, d_dp=4, d_ep=1, d_moetp=4, isl=921.5, osl=921.5)
    w = R1_NR + 256 * R1_PE / 4
    budget = 0.96 * 189_471 * 2**20 - 2e9 - w
    cap, b = M.kv_capacity(r1, c, np.array([1843.0]))
    assert b[0] == pytest.approx(budget)
    assert cap[0] == pytest.approx(budget / (1843 * 35136) * 4)
    assert 520 < cap[0] < 540 and cap[0] >= 128
    c0 = M.rows(**hw_rows([hw_spec(catalog.hardware["gb200-nvl72"], runtime_memory=False)], ["fp8"]),
                **{k: getattr(c, k) for k in M.ROW_FIELDS if k not in (
                    "bw", "p_e", "p_nr", "p_att", "link", "domain", "scale_out", "hbm", "s_nr", "s_e")})
    assert M.kv_capacity(r1, c0, np.array([1843.0]))[1][0] < 0


def test_batch_queue_terms_by_hand():
    """S1 = 0.1 s, S0 = 0.04 s, one decode step 0.02 s, a batch always running: the request waits
    half a batch, then its own: 1.5 (S1 + t) = 0.18 s at u = 0, i.e. 0.08 s over S1, and the
    batch's fixed part 0.06 s is stretched by u/(1-u) with coefficient 1.5 x 0.06 = 0.09 s."""
    q0, qc = M.batch_queue_terms(np.array(0.1), np.array(0.04), np.array(0.02), np.array(1.0))
    assert q0 == pytest.approx(0.08) and qc == pytest.approx(0.09)
    # at u = 0.5 the prefill part of TTFT is S1 + q0 + qc = 0.27 s
    assert 0.1 + q0 + qc * 0.5 / 0.5 == pytest.approx(0.27)
    # an idle server (busy = 0): the request is prefilled at once, S1 + t
    q0, qc = M.batch_queue_terms(np.array(0.1), np.array(0.04), np.array(0.0), np.array(0.0))
    assert q0 == pytest.approx(0.0) and qc == pytest.approx(0.04)


def test_batch_queue_in_evaluate_at_low_load(catalog, r1):
    """A disaggregated C = 1 request: TTFT = fixed + S1 + KV hand-off + (busy/2)(S1) with busy =
    lambda S1 (one request in the loop), so within a few % of fixed + S1 + xfer. (The batch queue
    is 0.4.0's form, kept as an ablation since 0.4.1.)"""
    e = M.Eff(burst_disagg=0.0, ttft_fixed_disagg=0.1)
    c = _row(catalog, conc=1, osl=1000, agg=0, n_p=1)
    out = M.evaluate(c, r1, e, options=M.ModelOptions(queue_form="batch"))
    s1 = out["s1"][0]
    xfer = 1000 * r1.kv_bytes_per_token / c.link[0]
    e2e = out["ttft"][0] + 999 * out["tpot"][0]
    busy = s1 / e2e                                 # lambda = 1 / e2e, n = 1
    assert out["ttft"][0] == pytest.approx(0.1 + s1 + xfer + 0.5 * busy * s1, rel=0.02)


def test_ttft_bounded_by_the_closed_loop(catalog, r1):
    """A decode pool with no KV room used to give TTFT ~1e12 s; the closed-loop bound caps it at
    the other C - 1 requests' prefills (S1 each) and decode lifetimes: fixed + C S1 +
    (C - 1)(OSL - 1) TPOT, plus (0.4.1, M/D/1 queue) the aggregated engine's 1.5-step iteration
    wait, which is part of the fixed wait."""
    e = M.Eff(burst_agg=0.0, t_req=0.0, ttft_fixed_agg=0.1)
    c = _row(catalog, conc=3, osl=100)
    c.hbm = np.array([1e9])                         # weights do not fit: no KV room
    out = M.evaluate(c, r1, e)
    assert out["capacity_per_instance"][0] == 0
    want = 0.1 + M.ENGINE_OPTIONS.iter_wait * out["t_step"][0] + 3 * out["s1"][0] + 2 * 99 * out["tpot"][0]
    assert out["ttft"][0] == pytest.approx(want)
    assert np.isfinite(out["rate"][0]) and out["rate"][0] > 0


def test_model_options_are_explicit_and_leave_the_engine_alone(catalog, r1):
    """An ablation's options change only the call they are passed to: the engine's defaults, and
    what evaluate() gives without options, stay as they were (no module state is switched)."""
    e = M.Eff(q_wait=0.1, burst_agg=0.1, burst_disagg=0.1, ttft_fixed_agg=0.1, ttft_fixed_disagg=0.1)
    c = _row(catalog, conc=64, osl=1000)
    before = M.evaluate(c, r1, e)["ttft"][0]
    for opts in (M.ModelOptions(queue_form="batch"), M.ModelOptions(queue_form="batch", batch_busy="always"),
                 M.ModelOptions(iter_wait=0.0), M.ModelOptions(burst_form="wave"),
                 M.ModelOptions(burst_form="hinge"), M.ModelOptions(ttft_bound=False)):
        M.evaluate(c, r1, e, options=opts)
    assert M.evaluate(c, r1, e)["ttft"][0] == before
    assert M.evaluate(c, r1, e, options=M.ModelOptions(queue_form="batch"))["ttft"][0] != before
    assert M.ENGINE_OPTIONS == M.ModelOptions()
    with pytest.raises(ValueError, match="queue_form"):
        M.ModelOptions(queue_form="mm1")
    assert hw_spec(catalog.hardware["b200"]).hbm_bytes == 180 * 2**30     # default: runtime bytes
    assert hw_spec(catalog.hardware["b200"], runtime_memory=False).hbm_bytes == 180e9

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
    expect_budget = 141e9 * 0.96 - 2e9 - weights
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


def test_chunked_prefill_iteration_wait_is_aggregated_only(catalog, r1, monkeypatch):
    """0.3.0: an aggregated engine's TTFT adds ITER_WAIT decode steps (1.5: half an iteration's
    wait, then one iteration shared with decode); a disaggregated prefill pool does not."""
    assert M.ITER_WAIT == 1.5
    e = M.Eff(q_wait=0.1, burst_agg=0.1, burst_disagg=0.1, ttft_fixed_agg=0.1, ttft_fixed_disagg=0.1)
    agg = _row(catalog, conc=1, osl=1000)      # C = 1: no queue, so no closed-loop feedback to speak of
    dis = _row(catalog, conc=1, osl=1000, agg=0, n_p=1)
    with_wait_a, with_wait_d = M.evaluate(agg, r1, e), M.evaluate(dis, r1, e)
    monkeypatch.setattr(M, "ITER_WAIT", 0.0)
    no_wait_a, no_wait_d = M.evaluate(agg, r1, e), M.evaluate(dis, r1, e)
    step = with_wait_a["t_step"][0]
    assert with_wait_a["ttft"][0] - no_wait_a["ttft"][0] == pytest.approx(1.5 * step, rel=0.05)
    assert with_wait_d["ttft"][0] == pytest.approx(no_wait_d["ttft"][0])

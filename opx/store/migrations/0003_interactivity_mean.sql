-- Interactivity at the mean TPOT, for sources that report means (`pct=mean`).
CREATE OR REPLACE VIEW point_metrics AS
SELECT
    p.run_id, p.seq, p.concurrency, p.request_rate,
    1.0 / p.tpot_mean_s AS interactivity_mean,
    1.0 / p.tpot_p50_s AS interactivity_p50,
    1.0 / p.tpot_p90_s AS interactivity_p90,
    1.0 / p.tpot_p99_s AS interactivity_p99,
    p.throughput_total_tok_s  / r.gpus_total AS throughput_total_per_gpu,
    p.throughput_output_tok_s / r.gpus_total AS throughput_output_per_gpu,
    p.throughput_input_tok_s  / r.gpus_total AS throughput_input_per_gpu,
    p.ttft_p50_s, p.ttft_p90_s, p.ttft_p99_s,
    p.tpot_p50_s, p.tpot_p90_s, p.tpot_p99_s,
    p.e2e_p50_s, p.e2e_p90_s, p.e2e_p99_s,
    p.tpot_mean_s, p.ttft_mean_s, p.e2e_mean_s,
    p.requests_completed, p.requests_failed, p.note, p.source
FROM points p JOIN runs r ON r.id = p.run_id;

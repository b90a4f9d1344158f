-- Runs: one configuration measured, published or simulated. Throughputs are stored as system totals
-- with the GPU counts; per-GPU figures are derived in the point_metrics view.
CREATE TABLE runs (
    id                VARCHAR PRIMARY KEY,   -- content hash of the run and its points
    hardware          VARCHAR NOT NULL,
    model             VARCHAR NOT NULL,
    framework         VARCHAR NOT NULL DEFAULT '',
    framework_version VARCHAR NOT NULL DEFAULT '',
    precision         VARCHAR NOT NULL DEFAULT '',
    workload          VARCHAR NOT NULL,
    isl               INTEGER,
    osl               INTEGER,
    prefix_hit_rate   DOUBLE,
    tp                INTEGER,
    ep                INTEGER,
    dp_attention      BOOLEAN,
    disaggregated     BOOLEAN NOT NULL DEFAULT FALSE,
    gpus_prefill      INTEGER,
    gpus_decode       INTEGER,
    gpus_total        INTEGER NOT NULL CHECK (gpus_total > 0),
    mtp               BOOLEAN,
    provenance        VARCHAR NOT NULL,
    source            VARCHAR NOT NULL,
    source_url        VARCHAR NOT NULL DEFAULT '',
    date              DATE,
    label             VARCHAR NOT NULL DEFAULT '',
    notes             VARCHAR NOT NULL DEFAULT '',
    meta              JSON,
    ingested_at       TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE points (
    run_id                   VARCHAR NOT NULL,
    seq                      INTEGER NOT NULL,
    point_key                VARCHAR NOT NULL,       -- hash of the values: a re-import adds nothing
    concurrency              DOUBLE,
    request_rate             DOUBLE,
    tpot_p50_s               DOUBLE,
    tpot_p90_s               DOUBLE,
    tpot_p99_s               DOUBLE,
    ttft_p50_s               DOUBLE,
    ttft_p90_s               DOUBLE,
    ttft_p99_s               DOUBLE,
    e2e_p50_s                DOUBLE,
    e2e_p90_s                DOUBLE,
    e2e_p99_s                DOUBLE,
    tpot_mean_s              DOUBLE,
    ttft_mean_s              DOUBLE,
    e2e_mean_s               DOUBLE,
    throughput_total_tok_s   DOUBLE,
    throughput_output_tok_s  DOUBLE,
    throughput_input_tok_s   DOUBLE,
    requests_completed       BIGINT,
    requests_failed          BIGINT,
    note                     VARCHAR NOT NULL DEFAULT '',
    source                   VARCHAR NOT NULL DEFAULT '',
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, point_key)
);

-- The canonical point fields: interactivity = 1 / TPOT(s) = 1000 / TPOT(ms); per-GPU = total / all GPUs.
CREATE VIEW point_metrics AS
SELECT
    p.run_id, p.seq, p.concurrency, p.request_rate,
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

-- Bumped by every write, so caches can key on it.
CREATE TABLE data_version (version BIGINT NOT NULL);
INSERT INTO data_version VALUES (0);

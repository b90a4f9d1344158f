-- opx's shared store on PostgreSQL (opx.pgstore): the tables of the DuckDB file's schema that
-- hold data (runs, points, saved views, stored envelopes and fits), each row stamped with the
-- data version of the write that made it, and a log of the keys each write removed, so a
-- dashboard replica loads only what changed since the version it holds. JSON columns are TEXT
-- (each process's DuckDB copy reads them as JSON).

CREATE TABLE runs (
    id                TEXT PRIMARY KEY,
    hardware          TEXT NOT NULL,
    model             TEXT NOT NULL,
    framework         TEXT NOT NULL DEFAULT '',
    framework_version TEXT NOT NULL DEFAULT '',
    precision         TEXT NOT NULL DEFAULT '',
    workload          TEXT NOT NULL,
    isl               INTEGER,
    osl               INTEGER,
    prefix_hit_rate   DOUBLE PRECISION,
    tp                INTEGER,
    ep                INTEGER,
    dp_attention      BOOLEAN,
    disaggregated     BOOLEAN NOT NULL DEFAULT FALSE,
    gpus_prefill      INTEGER,
    gpus_decode       INTEGER,
    gpus_total        INTEGER NOT NULL CHECK (gpus_total > 0),
    mtp               BOOLEAN,
    provenance        TEXT NOT NULL,
    source            TEXT NOT NULL,
    source_url        TEXT NOT NULL DEFAULT '',
    date              DATE,
    label             TEXT NOT NULL DEFAULT '',
    notes             TEXT NOT NULL DEFAULT '',
    meta              TEXT,
    ingested_at       TIMESTAMP NOT NULL DEFAULT current_timestamp,
    version           BIGINT NOT NULL
);
CREATE INDEX runs_version ON runs (version);

CREATE TABLE points (
    run_id                   TEXT NOT NULL,
    seq                      INTEGER NOT NULL,
    point_key                TEXT NOT NULL,
    concurrency              DOUBLE PRECISION,
    request_rate             DOUBLE PRECISION,
    tpot_p50_s               DOUBLE PRECISION,
    tpot_p90_s               DOUBLE PRECISION,
    tpot_p99_s               DOUBLE PRECISION,
    ttft_p50_s               DOUBLE PRECISION,
    ttft_p90_s               DOUBLE PRECISION,
    ttft_p99_s               DOUBLE PRECISION,
    e2e_p50_s                DOUBLE PRECISION,
    e2e_p90_s                DOUBLE PRECISION,
    e2e_p99_s                DOUBLE PRECISION,
    tpot_mean_s              DOUBLE PRECISION,
    ttft_mean_s              DOUBLE PRECISION,
    e2e_mean_s               DOUBLE PRECISION,
    throughput_total_tok_s   DOUBLE PRECISION,
    throughput_output_tok_s  DOUBLE PRECISION,
    throughput_input_tok_s   DOUBLE PRECISION,
    requests_completed       BIGINT,
    requests_failed          BIGINT,
    note                     TEXT NOT NULL DEFAULT '',
    source                   TEXT NOT NULL DEFAULT '',
    version                  BIGINT NOT NULL,
    PRIMARY KEY (run_id, seq),
    UNIQUE (run_id, point_key)
);
CREATE INDEX points_version ON points (version);

CREATE TABLE saved_views (
    slug          TEXT PRIMARY KEY,
    title         TEXT NOT NULL,
    page          TEXT NOT NULL,
    query         TEXT NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    data_version  BIGINT NOT NULL,
    run_ids       TEXT,
    version       BIGINT NOT NULL
);

CREATE TABLE envelope_points (
    hardware  TEXT NOT NULL,
    model     TEXT NOT NULL,
    workload  TEXT NOT NULL,
    simulated BOOLEAN NOT NULL,
    pct       TEXT NOT NULL,
    ybase     TEXT NOT NULL,
    run_id    TEXT NOT NULL,
    seq       INTEGER NOT NULL,
    version   BIGINT NOT NULL
);
CREATE INDEX envelope_points_group ON envelope_points (hardware, model, workload);
CREATE INDEX envelope_points_version ON envelope_points (version);

CREATE TABLE derived_fits (
    key        TEXT PRIMARY KEY,
    hardware   TEXT NOT NULL,
    model      TEXT NOT NULL,
    workload   TEXT NOT NULL,
    engine     TEXT NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    payload    BYTEA NOT NULL,
    version    BIGINT NOT NULL
);
CREATE INDEX derived_fits_version ON derived_fits (version);

-- the keys a write removed (or replaced), by the journal's key of each table (opx/journal.py)
CREATE TABLE removed_keys (
    version BIGINT NOT NULL,
    tbl     TEXT NOT NULL,
    k1      TEXT NOT NULL,
    k2      TEXT,
    k3      TEXT
);
CREATE INDEX removed_keys_version ON removed_keys (version);

-- epoch: a database built again at the same URL gets another, so a replica's copy of the old one
-- is loaded again whole, never mixed with the new one
CREATE TABLE data_version (version BIGINT NOT NULL, epoch TEXT NOT NULL);
INSERT INTO data_version VALUES (0, md5(random()::text || clock_timestamp()::text));

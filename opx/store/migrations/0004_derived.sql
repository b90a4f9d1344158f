-- What depends only on the data, computed when it changes and stored (docs/architecture.md,
-- "Work done when data changes").
-- Each hardware's envelope over all its runs of a model and workload, per statistic and
-- throughput kind (opx/envelopes.py fills it in the same transaction as every write).
CREATE TABLE envelope_points (
    hardware VARCHAR NOT NULL,
    model    VARCHAR NOT NULL,
    workload VARCHAR NOT NULL,
    simulated BOOLEAN NOT NULL,
    pct      VARCHAR NOT NULL,
    ybase    VARCHAR NOT NULL,
    run_id   VARCHAR NOT NULL,
    seq      INTEGER NOT NULL
);
-- Anchored projections (opx/stored_fits.py), keyed by a hash of everything they depend on: the
-- anchors, the knobs, the catalog entries, the simulator's code and calibration.
CREATE TABLE derived_fits (
    key        VARCHAR PRIMARY KEY,
    hardware   VARCHAR NOT NULL,
    model      VARCHAR NOT NULL,
    workload   VARCHAR NOT NULL,
    engine     VARCHAR NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    payload    BLOB NOT NULL
);

-- Envelopes over configurations: a repeat set (the points of one configuration at one
-- concurrency, from several runs) counts once, at its medians (opx/store/repeats.py). The
-- stored envelopes are computed again after this migration (opx/store/schema.py,
-- AFTER_MIGRATION); the tables do not change.
SELECT 1;

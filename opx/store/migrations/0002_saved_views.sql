-- Saved views: a named link (`?view=<slug>`) with the state it had, when it was saved, on which
-- data version, and which runs it showed (so it can say when some were deleted since).
CREATE TABLE saved_views (
    slug          VARCHAR PRIMARY KEY,
    title         VARCHAR NOT NULL,
    page          VARCHAR NOT NULL,
    query         VARCHAR NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp,
    data_version  BIGINT NOT NULL,
    run_ids       JSON
);

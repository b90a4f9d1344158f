-- removed_keys keeps the keys removed by the versions above removed_floor only (opx prunes the
-- older ones on write); a copy older than the floor cannot catch up from the log and is loaded
-- again whole
ALTER TABLE data_version ADD COLUMN removed_floor BIGINT NOT NULL DEFAULT 0;

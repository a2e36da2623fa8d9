-- The latest state of the vms frame, read with DuckDB alone (no svcnb).
-- Each resource folder holds segments: a base (all rows) plus the versions written after it;
-- the newest segment, the last version of each key, tombstones dropped, gives the latest state.
WITH versions AS (
    SELECT * FROM read_parquet('data/store/vms/*/*.parquet', hive_partitioning = true)
),
latest AS (
    SELECT * FROM versions
    WHERE segment = (SELECT max(segment) FROM versions)
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY _seq DESC) = 1
)
SELECT * EXCLUDE (segment, _seq, _removed) FROM latest
WHERE NOT _removed
ORDER BY id;

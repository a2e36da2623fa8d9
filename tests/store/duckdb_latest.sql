-- The latest vms frame read with DuckDB alone (no svcnb). Each resource folder holds segments:
-- a base (every row) plus the row versions written after it (_seq: the snapshot that wrote it,
-- _removed: the key left the account). Versions past the last published snapshot (left by a
-- writer that was killed) are ignored; the newest segment, the last version of each key,
-- tombstones dropped, is the latest state.
WITH published AS (
    SELECT max(s.seq) AS seq
    FROM (SELECT unnest(snapshots) AS s FROM read_json('data/store/manifest.json'))
),
versions AS (
    SELECT * FROM read_parquet('data/store/vms/*/*.parquet', hive_partitioning = true)
    WHERE _seq <= (SELECT seq FROM published)
),
latest AS (
    SELECT * FROM versions
    WHERE segment = (SELECT max(segment) FROM versions)
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY _seq DESC) = 1
)
SELECT * EXCLUDE (segment, _seq, _removed) FROM latest
WHERE NOT _removed
ORDER BY id;

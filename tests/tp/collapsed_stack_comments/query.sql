-- Comments and blank lines are skipped; lines without a positive count
-- are counted in stats, not imported.
SELECT COUNT(*) AS sample_count FROM __intrinsic_aggregate_sample;
SELECT SUM(value) AS total_count FROM __intrinsic_aggregate_sample;
SELECT name, value FROM stats WHERE name = 'collapsed_stack_parse_error';

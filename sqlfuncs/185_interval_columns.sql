-- Interval columns (schema/interval.go) are stored as 16-byte fixed-size
-- binaries marked pg_type=interval, which Spark's type names do not cover:
-- spark_pg_typid (migration 19) gives them interval's OID from that mark,
-- as it does for the other types a pg_type names.
CREATE OR REPLACE FUNCTION lakesoul_pg.spark_pg_typid(p_spark_type text, p_pg_type text)
RETURNS oid LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN p_pg_type ~ '^enum:[0-9]{1,10}$' THEN substr(p_pg_type, 6)::bigint ELSE CASE split_part(p_pg_type, '(', 1)
             WHEN 'varchar'  THEN 1043
             WHEN 'bpchar'   THEN 1042
             WHEN 'uuid'     THEN 2950
             WHEN 'json'     THEN 114
             WHEN 'jsonb'    THEN 3802
             WHEN 'interval' THEN 1186
             ELSE CASE
               WHEN p_spark_type = 'long'             THEN 20
               WHEN p_spark_type = 'integer'          THEN 23
               WHEN p_spark_type IN ('short', 'byte') THEN 21
               WHEN p_spark_type = 'double'           THEN 701
               WHEN p_spark_type = 'float'            THEN 700
               WHEN p_spark_type = 'boolean'          THEN 16
               WHEN p_spark_type = 'string'           THEN 25
               WHEN p_spark_type = 'binary'           THEN 17
               WHEN p_spark_type = 'date'             THEN 1082
               WHEN p_spark_type = 'timestamp'        THEN 1184
               WHEN p_spark_type = 'timestamp_ntz'    THEN 1114
               WHEN p_spark_type ~ '^decimal\(\d{1,4},\s*\d{1,4}\)$' THEN 1700
               ELSE 25
             END
           END END::oid
$$;

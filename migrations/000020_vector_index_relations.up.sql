-- Vector indexes (lakesoul.vector_index) are relations of the emulated
-- catalog, as column indexes are (000016): psql \di and \d, pg_class,
-- pg_index, pg_attribute and pg_indexes list them, with OIDs from the same
-- range (2^31 + column_index_oid_seq), and pg_get_indexdef renders their
-- CREATE INDEX … USING ivfflat.
ALTER TABLE lakesoul.vector_index ADD COLUMN oid8 bigint NOT NULL UNIQUE
    DEFAULT 2147483648 + nextval('lakesoul.column_index_oid_seq');
GRANT SELECT ON lakesoul.vector_index TO PUBLIC; -- read by the views below; RLS keeps the rows

CREATE OR REPLACE VIEW lakesoul_pg.lake_all_index WITH (security_invoker = true) AS
SELECT i.indexrelid, i.indrelid, i.relname, i.tablename, i.relnamespace, i.nspname, i.pkattnums,
       i.table_schema, true AS is_unique, true AS is_primary
  FROM lakesoul_pg.lake_index i
UNION ALL
SELECT ci.oid8::oid, t.oid, ci.index_name::name, t.relname, t.relnamespace, t.nspname,
       ARRAY(SELECT c.attnum FROM unnest(ci.columns) WITH ORDINALITY AS u(name, n)
               JOIN lakesoul_pg.schema_columns(t.table_schema) c ON c.attname = u.name
              ORDER BY u.n)::int2[],
       t.table_schema, ci.is_unique, false
  FROM lakesoul.column_index ci
  JOIN lakesoul_pg.lake_table t ON t.table_id = ci.table_id
UNION ALL
SELECT vi.oid8::oid, t.oid, vi.index_name::name, t.relname, t.relnamespace, t.nspname,
       ARRAY(SELECT c.attnum FROM lakesoul_pg.schema_columns(t.table_schema) c
              WHERE c.attname = vi.column_name)::int2[],
       t.table_schema, false, false
  FROM lakesoul.vector_index vi
  JOIN lakesoul_pg.lake_table t ON t.table_id = vi.table_id;

-- pg_get_indexdef of a vector index; other OIDs as 000016 renders them.
CREATE OR REPLACE FUNCTION lakesoul_pg.pg_get_indexdef(p_oid oid, p_column int4, p_pretty boolean)
RETURNS text LANGUAGE plpgsql STABLE STRICT AS $$
DECLARE
    r record;
    ci record;
    vi record;
BEGIN
    SELECT v.index_name, v.column_name, v.method, v.metric, v.options, t.nspname, t.relname
      INTO vi FROM lakesoul.vector_index v JOIN lakesoul_pg.lake_table t ON t.table_id = v.table_id
     WHERE v.oid8 = p_oid::int8;
    IF FOUND THEN
        IF p_column = 0 THEN
            RETURN format('CREATE INDEX %I ON %I.%I USING %s (%I vector_%s_ops)%s', vi.index_name, vi.nspname, vi.relname,
                          vi.method, vi.column_name, vi.metric,
                          CASE WHEN vi.options ? 'lists' THEN format(' WITH (lists=%s)', vi.options->>'lists') ELSE '' END);
        END IF;
        RETURN CASE WHEN p_column = 1 THEN quote_ident(vi.column_name) ELSE '' END;
    END IF;
    SELECT i.relname, i.nspname, i.tablename, i.is_unique, ARRAY(SELECT c.attname FROM unnest(i.pkattnums) WITH ORDINALITY AS k(attnum, n)
                                  JOIN lakesoul_pg.schema_columns(i.table_schema) c ON c.attnum = k.attnum ORDER BY k.n) AS cols
      INTO ci FROM lakesoul_pg.lake_all_index i WHERE i.indexrelid = p_oid AND NOT i.is_primary;
    IF FOUND THEN
        IF p_column = 0 THEN
            RETURN format('CREATE %sINDEX %I ON %I.%I USING btree (%s)', CASE WHEN ci.is_unique THEN 'UNIQUE ' ELSE '' END,
                          ci.relname, ci.nspname, ci.tablename, (SELECT string_agg(quote_ident(k), ', ') FROM unnest(ci.cols) k));
        END IF;
        RETURN quote_ident(ci.cols[p_column]);
    END IF;
    SELECT * INTO r FROM lakesoul_pg.lake_relation(p_oid);
    IF NOT FOUND OR NOT r.is_index THEN
        RETURN pg_catalog.pg_get_indexdef(p_oid, p_column, p_pretty);
    ELSIF p_column = 0 THEN
        RETURN format('CREATE UNIQUE INDEX %I ON %I.%I USING btree (%s)', r.relname, r.nspname,
                      r.tablename, (SELECT string_agg(quote_ident(k), ', ') FROM unnest(r.keycols) k));
    END IF;
    RETURN quote_ident(r.keycols[p_column]);
END
$$;

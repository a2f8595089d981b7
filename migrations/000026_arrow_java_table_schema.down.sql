-- Back to the definitions of migration 3 (Spark StructType schemas only).
CREATE OR REPLACE FUNCTION lakesoul_pg.schema_fields(p_table_schema text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v jsonb;
BEGIN
    v := p_table_schema::jsonb -> 'fields';
    IF jsonb_typeof(v) = 'array' THEN
        RETURN v;
    END IF;
    RETURN '[]';
EXCEPTION WHEN invalid_text_representation THEN
    RETURN '[]';
END
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.column_count(p_table_schema text)
RETURNS int2 LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_array_length(lakesoul_pg.schema_fields(p_table_schema))::int2
$$;

CREATE OR REPLACE FUNCTION lakesoul_pg.pk_attnums(p_table_schema text, p_pk text[])
RETURNS int2[] LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v   jsonb;
    k   text;
    res int2[] := '{}';
BEGIN
    IF coalesce(cardinality(p_pk), 0) = 0 THEN
        RETURN res;
    END IF;
    v := lakesoul_pg.schema_fields(p_table_schema);
    FOREACH k IN ARRAY p_pk LOOP
        FOR i IN 0 .. jsonb_array_length(v) - 1 LOOP
            IF v -> i ->> 'name' = k THEN
                res := res || (i + 1)::int2;
                EXIT;
            END IF;
        END LOOP;
    END LOOP;
    RETURN res;
END
$$;

DROP FUNCTION IF EXISTS lakesoul_pg.schema_field_list(text);
DROP FUNCTION IF EXISTS lakesoul_pg.arrow_java_type(jsonb);

DROP TRIGGER IF EXISTS table_oid_register ON public.table_info;
DROP TRIGGER IF EXISTS namespace_oid_register ON public.namespace;
DROP FUNCTION IF EXISTS lakesoul.register_table_oid();
DROP FUNCTION IF EXISTS lakesoul.register_namespace_oid();

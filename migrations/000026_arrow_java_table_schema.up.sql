-- table_info.table_schema in Arrow Java's form (schema.FormatTableSchema):
-- {"fields":[{"name", "nullable", "type":{"name":"int","bitWidth":64,…},
-- "children":[…], "metadata":[{"key":…,"value":…}]}]}, which LakeSoul's
-- current Spark, Flink and Rust/Python clients write and its Rust readers
-- require, besides Spark's StructType form {"type":"struct","fields":[…]}.
-- The pg_catalog emulation reads columns through schema_fields, which now
-- gives Spark-shaped fields ({"name", "type": Spark type name or array
-- object, "nullable", "metadata": {key: value}}) for both forms, so every
-- view built on it (pg_attribute, pg_attrdef, information_schema, enums'
-- dependencies) reads either.

-- arrow_java_type is the Spark type (a JSON string) of an Arrow Java type
-- object, or NULL for a type Spark's names do not cover (shown as text, as
-- spark_pg_typid shows unknown types; the server itself refuses such tables).
-- One expression, so callers inline it.
CREATE OR REPLACE FUNCTION lakesoul_pg.arrow_java_type(p_type jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$
    SELECT (CASE p_type ->> 'name'
              WHEN 'int' THEN
                   CASE WHEN coalesce(p_type ->> 'isSigned', 'true') = 'true' THEN
                        CASE p_type ->> 'bitWidth'
                          WHEN '64' THEN '"long"' WHEN '32' THEN '"integer"'
                          WHEN '16' THEN '"short"' WHEN '8' THEN '"byte"' END END
              WHEN 'floatingpoint' THEN
                   CASE upper(p_type ->> 'precision') WHEN 'DOUBLE' THEN '"double"' WHEN 'SINGLE' THEN '"float"' END
              WHEN 'utf8' THEN '"string"'
              WHEN 'largeutf8' THEN '"string"'
              WHEN 'binary' THEN '"binary"'
              WHEN 'largebinary' THEN '"binary"'
              WHEN 'bool' THEN '"boolean"'
              WHEN 'date' THEN CASE WHEN upper(p_type ->> 'unit') = 'DAY' THEN '"date"' END
              WHEN 'timestamp' THEN
                   CASE WHEN upper(p_type ->> 'unit') = 'MICROSECOND' THEN
                        CASE WHEN coalesce(p_type ->> 'timezone', '') <> '' THEN '"timestamp"' ELSE '"timestamp_ntz"' END END
              WHEN 'decimal' THEN
                   to_jsonb('decimal(' || (p_type ->> 'precision') || ',' || (p_type ->> 'scale') || ')')::text
            END)::jsonb
$$;

-- schema_field_list is the "fields" array of a table schema in either form,
-- as stored, or an empty array when the text is no such JSON. Names and the
-- number of columns read the same in both forms.
CREATE OR REPLACE FUNCTION lakesoul_pg.schema_field_list(p_table_schema text)
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

-- schema_fields returns a table schema's fields in Spark's shape: Spark
-- StructType fields as stored; Arrow Java fields converted (type as Spark
-- names it, lists and fixed-size lists as Spark arrays of their element,
-- metadata entries as an object). Simple expressions only (it runs per table
-- in catalog scans); a malformed schema has no fields.
CREATE OR REPLACE FUNCTION lakesoul_pg.schema_fields(p_table_schema text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v   jsonb;
    f   jsonb;
    c   jsonb;
    t   jsonb;
    md  jsonb;
    e   jsonb;
    res jsonb := '[]';
BEGIN
    v := p_table_schema::jsonb;
    IF jsonb_typeof(v -> 'fields') IS DISTINCT FROM 'array' THEN
        RETURN '[]';
    END IF;
    IF v ? 'type' THEN
        RETURN v -> 'fields';
    END IF;
    FOR i IN 0 .. jsonb_array_length(v -> 'fields') - 1 LOOP
        f := v -> 'fields' -> i;
        IF f -> 'type' ->> 'name' IN ('list', 'largelist', 'fixedsizelist') THEN
            c := f -> 'children' -> 0;
            t := jsonb_build_object('type', 'array', 'elementType', lakesoul_pg.arrow_java_type(c -> 'type'),
                                    'containsNull', coalesce(c -> 'nullable', 'true'));
        ELSE
            t := lakesoul_pg.arrow_java_type(f -> 'type');
        END IF;
        md := '{}';
        IF jsonb_typeof(f -> 'metadata') = 'object' THEN
            md := f -> 'metadata';
        ELSIF jsonb_typeof(f -> 'metadata') = 'array' THEN
            FOR j IN 0 .. jsonb_array_length(f -> 'metadata') - 1 LOOP
                e := f -> 'metadata' -> j;
                IF e ->> 'key' IS NOT NULL THEN
                    md := md || jsonb_build_object(e ->> 'key', e ->> 'value');
                END IF;
            END LOOP;
        END IF;
        res := res || jsonb_build_array(jsonb_build_object('name', f -> 'name', 'type', t,
                                                           'nullable', coalesce(f -> 'nullable', 'true'),
                                                           'metadata', md));
    END LOOP;
    RETURN res;
EXCEPTION WHEN invalid_text_representation THEN
    RETURN '[]';
END
$$;

-- column_count and pk_attnums need names and positions only, which both
-- forms store alike: they read the fields as stored.
CREATE OR REPLACE FUNCTION lakesoul_pg.column_count(p_table_schema text)
RETURNS int2 LANGUAGE sql IMMUTABLE AS $$
    SELECT jsonb_array_length(lakesoul_pg.schema_field_list(p_table_schema))::int2
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
    v := lakesoul_pg.schema_field_list(p_table_schema);
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

-- Namespaces and tables LakeSoul's own clients create (the Python package,
-- Spark, Flink insert public.namespace and public.table_info rows directly)
-- get their OIDs as they are inserted, so they appear in the emulated
-- catalog (\d, JDBC metadata, pg_dump) like the server's own; a table they
-- drop takes its OID row along. SECURITY DEFINER: those clients' roles have
-- no rights on schema lakesoul.
CREATE OR REPLACE FUNCTION lakesoul.register_table_oid() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM lakesoul.table_oid WHERE table_id = OLD.table_id;
    ELSE
        INSERT INTO lakesoul.table_oid (table_id) VALUES (NEW.table_id) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS table_oid_register ON public.table_info;
CREATE TRIGGER table_oid_register
    AFTER INSERT OR DELETE ON public.table_info
    FOR EACH ROW EXECUTE FUNCTION lakesoul.register_table_oid();

CREATE OR REPLACE FUNCTION lakesoul.register_namespace_oid() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    INSERT INTO lakesoul.namespace_oid (namespace) VALUES (NEW.namespace) ON CONFLICT DO NOTHING;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS namespace_oid_register ON public.namespace;
CREATE TRIGGER namespace_oid_register
    AFTER INSERT ON public.namespace
    FOR EACH ROW EXECUTE FUNCTION lakesoul.register_namespace_oid();

-- Those created while no trigger was there.
INSERT INTO lakesoul.namespace_oid (namespace)
SELECT namespace FROM public.namespace ORDER BY namespace
ON CONFLICT DO NOTHING;
INSERT INTO lakesoul.table_oid (table_id)
SELECT table_id FROM public.table_info ORDER BY table_id
ON CONFLICT DO NOTHING;

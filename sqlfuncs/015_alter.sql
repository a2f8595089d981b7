-- Table schema and property changes (ALTER TABLE). The whole properties JSON is
-- replaced, except that an existing "domain" key is kept (LakeSoul's rule); a
-- schema change stamps last_schema_change_time and drops the cached Arrow IPC
-- schema, as LakeSoul's UpdateTableInfoById does.

CREATE OR REPLACE FUNCTION lakesoul.alter_table(p_table_id text, p_table_schema text, p_properties jsonb)
RETURNS void LANGUAGE plpgsql
SET search_path = pg_catalog, public AS $$
DECLARE
    v_old public.table_info%ROWTYPE;
    v_props jsonb := p_properties;
BEGIN
    SELECT * INTO v_old FROM public.table_info WHERE table_id = p_table_id FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'table % does not exist', p_table_id USING ERRCODE = '42P01';
    END IF;
    IF v_old.properties::jsonb ? 'domain' THEN
        v_props := v_props || jsonb_build_object('domain', v_old.properties::jsonb->>'domain');
    END IF;
    IF p_table_schema IS DISTINCT FROM v_old.table_schema THEN
        v_props := v_props || jsonb_build_object('last_schema_change_time',
            ((extract(epoch FROM clock_timestamp()) * 1000)::bigint)::text);
        UPDATE public.table_info
           SET table_schema = p_table_schema, properties = v_props::json,
               table_schema_arrow_ipc = NULL, table_schema_arrow_ipc_json_hash = NULL
         WHERE table_id = p_table_id;
    ELSE
        UPDATE public.table_info SET properties = v_props::json WHERE table_id = p_table_id;
    END IF;
END
$$;

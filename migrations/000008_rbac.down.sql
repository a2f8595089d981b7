DROP POLICY IF EXISTS partition_registry_visible ON lakesoul.partition_registry;
ALTER TABLE lakesoul.partition_registry DISABLE ROW LEVEL SECURITY;
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['table_info', 'table_name_id', 'table_path_id', 'data_commit_info', 'partition_info'] LOOP
        EXECUTE format('DROP POLICY IF EXISTS %I ON public.%I', t || '_domain', t);
        EXECUTE format('ALTER TABLE public.%I DISABLE ROW LEVEL SECURITY', t);
    END LOOP;
END
$$;
DROP POLICY IF EXISTS namespace_select ON public.namespace;
DROP POLICY IF EXISTS namespace_insert ON public.namespace;
DROP POLICY IF EXISTS namespace_update ON public.namespace;
DROP POLICY IF EXISTS namespace_delete ON public.namespace;
ALTER TABLE public.namespace DISABLE ROW LEVEL SECURITY;
DROP FUNCTION IF EXISTS lakesoul.domain_admin(text);
DROP FUNCTION IF EXISTS lakesoul.domain_visible(text);
DROP INDEX IF EXISTS public.namespace_domain_index, public.table_info_domain_index, public.table_name_id_domain_index,
    public.table_path_id_domain_index, public.data_commit_info_domain_index, public.partition_info_domain_index;
ALTER TABLE public.table_info DROP COLUMN IF EXISTS creator;
ALTER TABLE public.namespace DROP COLUMN IF EXISTS creator;
-- The base roles stay: other databases of the cluster may use them.

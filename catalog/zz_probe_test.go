package catalog_test

import (
	"context"
	"testing"
	"time"
)

func TestZZProbe(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	tbl := newTable(t, c, "default", "t", []string{"d"}, []string{"id"})
	exec := func(name, sql string, args ...any) {
		start := time.Now()
		if _, err := c.Pool().Exec(ctx, sql, args...); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-40s %v", name, time.Since(start))
	}
	start := time.Now()
	for i := 0; i < 1000; i++ {
		c.Pool().Exec(ctx, "SELECT 1")
	}
	t.Logf("select 1: %v", time.Since(start)/1000)
	body := func(n int, call string) string {
		return `DO $$ DECLARE i int; BEGIN FOR i IN 1..` + itoa(n) + ` LOOP ` + call + ` END LOOP; END $$`
	}
	exec("1000 commits in one tx, 10 partitions", body(1000, `PERFORM lakesoul.commit('`+tbl.ID+`', 'MergeCommit', jsonb_build_array(jsonb_build_object('partition_desc', 'd=' || (i % 10), 'commit_id', gen_random_uuid(), 'file_ops', jsonb_build_array(jsonb_build_object('path', 'file:///x/y/part-' || gen_random_uuid(), 'file_op', 'add', 'size', 1, 'file_exist_cols', 'id,v')))));`))
	exec("1000 commits in one tx, 10 partitions", body(1000, `PERFORM lakesoul.commit('`+tbl.ID+`', 'MergeCommit', jsonb_build_array(jsonb_build_object('partition_desc', 'd=' || (i % 10), 'commit_id', gen_random_uuid(), 'file_ops', jsonb_build_array(jsonb_build_object('path', 'file:///x/y/part-' || gen_random_uuid(), 'file_op', 'add', 'size', 1, 'file_exist_cols', 'id,v')))));`))
	exec("1000 commit_one_partition", body(1000, `PERFORM lakesoul.commit_one_partition('`+tbl.ID+`', 'public', 'MergeCommit', jsonb_build_object('partition_desc', 'd=' || (i % 10), 'commit_id', gen_random_uuid(), 'file_ops', jsonb_build_array(jsonb_build_object('path', 'file:///x/y/part-' || gen_random_uuid(), 'file_op', 'add', 'size', 1, 'file_exist_cols', 'id,v'))));`))
	exec("1000 ops parse", body(1000, `PERFORM (SELECT coalesce(array_agg(ROW(o->>'path', o->>'file_op', (o->>'size')::bigint, o->>'file_exist_cols')::public.data_file_op ORDER BY n), '{}') FROM jsonb_array_elements(jsonb_build_array(jsonb_build_object('path', 'file:///x/y/part-' || gen_random_uuid(), 'file_op', 'add', 'size', 1, 'file_exist_cols', 'id,v'))) WITH ORDINALITY AS e(o, n));`))
	exec("1000 pi inserts", body(1000, `INSERT INTO public.partition_info (table_id, partition_desc, version, commit_op, timestamp, snapshot, expression, domain) VALUES ('x', 'd=1', i, 'MergeCommit', 1, ARRAY[gen_random_uuid()], '', 'public');`))
	exec("1000 dci inserts", body(1000, `INSERT INTO public.data_commit_info (table_id, partition_desc, commit_id, file_ops, commit_op, committed, timestamp, domain) VALUES ('x', 'd=1', gen_random_uuid(), ARRAY[ROW('p', 'add', 1, 'a')::data_file_op], 'MergeCommit', false, 1, 'public');`))
	exec("1000 advisory locks", body(1000, `PERFORM pg_advisory_xact_lock(hashtextextended('x' || i, 0));`))
	exec("1000 table_info FOR SHARE", body(1000, `PERFORM 1 FROM public.table_info WHERE table_id = '`+tbl.ID+`' FOR SHARE;`))
	exec("1000 latest version lookups", body(1000, `PERFORM version FROM public.partition_info WHERE table_id = '`+tbl.ID+`' AND partition_desc = 'd=' || (i % 10) ORDER BY version DESC LIMIT 1;`))
}

func itoa(i int) string { return string(rune('0'+i/1000%10)) + string(rune('0'+i/100%10)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10)) }

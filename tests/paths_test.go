package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/objstore/s3test"
)

// Issue 13 item 2: names become paths. Table names and partition values are
// user input; each must become one escaped path segment inside
// <warehouse>/<namespace>/<table>/, and nothing the server writes or deletes
// may land outside the table's directory. Before the fix `DROP TABLE
// s."../../../x"` removed <warehouse>/../../x recursively, `"."` and `".."`
// removed the namespace and the warehouse, `"t#frag"` and `"%2e%2e/y"` were
// read by a URI parser as table t and namespace y, and the partition value
// '/../../x' wrote into table x.

// hostileNames are table names with the directory name each must get
// (LakeSoul's Spark escaping, dot segments escaped too) and what the name
// used to reach.
var hostileNames = []struct{ name, dir, target string }{
	{"../../../pth_sentinel", "..%2F..%2F..%2Fpth_sentinel", "a directory beside the data dir"},
	{"%2e%2e/pth_y", "%252e%252e%2Fpth_y", "namespace pth_y, once percent-decoded"},
	{"t#frag", "t%23frag", "table t: the URI fragment was dropped"},
	{"a/b", "a%2Fb", "a directory inside table a"},
	{".", "%2E", "the namespace directory"},
	{"..", "%2E%2E", "the whole warehouse"},
	{"q?x=1", "q%3Fx%3D1", "a URI query"},
}

// hostileValues are partition values with their directory under the table.
var hostileValues = []struct{ value, dir string }{
	{"/../../x", "v=%2F..%2F..%2Fx"}, // table x of the namespace
	{"..", "v=.."},
	{"a/b", "v=a%2Fb"},
	{"%2e%2e", "v=%252e%252e"},
	{".", "v=."},
	{"plain", "v=plain"},
}

// warehouseView reads and plants objects of a server's storage, by paths
// relative to a base that holds the warehouse (local: the directory beside
// the data dir; S3: the test prefix).
type warehouseView struct {
	wh    string // warehouse URI
	whRel string // the warehouse relative to base
	// list returns the objects below rel (recursively), relative to base.
	list func(t *testing.T, rel string) []string
	// top returns the objects directly in rel, relative to base.
	top func(t *testing.T, rel string) []string
	// put stores a small object at rel.
	put func(t *testing.T, rel string)
}

func localView(srv *server) warehouseView {
	base := filepath.Dir(srv.dataDir)
	whRel := filepath.Join(filepath.Base(srv.dataDir), "warehouse")
	return warehouseView{
		wh:    objstore.LocalURI(filepath.Join(base, whRel)),
		whRel: whRel,
		list: func(t *testing.T, rel string) []string {
			var out []string
			for _, f := range filesUnder(t, filepath.Join(base, rel)) {
				out = append(out, filepath.Join(rel, f))
			}
			return out
		},
		top: func(t *testing.T, rel string) []string {
			ents, err := os.ReadDir(filepath.Join(base, rel))
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, e := range ents {
				if e.Type().IsRegular() {
					out = append(out, filepath.Join(rel, e.Name()))
				}
			}
			return out
		},
		put: func(t *testing.T, rel string) {
			p := filepath.Join(base, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("sentinel"), 0o644); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func s3View(s3srv *s3test.Server, st *objstore.S3) warehouseView {
	return warehouseView{
		wh:    s3srv.URI("wh"),
		whRel: "wh",
		list: func(t *testing.T, rel string) []string {
			keys, err := st.List(context.Background(), s3srv.Bucket, s3srv.Prefix+"/"+rel+"/")
			if err != nil {
				t.Fatal(err)
			}
			out := make([]string, len(keys))
			for i, k := range keys {
				out[i] = strings.TrimPrefix(k, s3srv.Prefix+"/")
			}
			slices.Sort(out)
			return out
		},
		top: func(t *testing.T, rel string) []string {
			keys, err := st.List(context.Background(), s3srv.Bucket, s3srv.Prefix+"/"+rel+"/")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, k := range keys {
				if name := strings.TrimPrefix(k, s3srv.Prefix+"/"+rel+"/"); !strings.Contains(name, "/") {
					out = append(out, rel+"/"+name)
				}
			}
			slices.Sort(out)
			return out
		},
		put: func(t *testing.T, rel string) { putObject(t, st, s3srv.URI(rel), []byte("sentinel")) },
	}
}

// TestHostileNamesAndValues runs the path scenario on the shared server
// (local warehouse).
func TestHostileNamesAndValues(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	testHostileNames(t, srv, localView(srv))
}

// TestHostileNamesAndValuesS3 runs it with the warehouse on S3.
func TestHostileNamesAndValuesS3(t *testing.T) {
	requirePG(t)
	for _, s3srv := range s3test.Servers(t) {
		t.Run(s3srv.Name, func(t *testing.T) {
			srv := startS3Server(t, testBaseDir(t)+"/data", s3srv)
			testHostileNames(t, srv, s3View(s3srv, s3srv.Store(t, objstore.S3Options{})))
			srv.stopT(t)
		})
	}
}

func testHostileNames(t *testing.T, srv *server, v warehouseView) {
	ctx := testCtx(t)
	c := srv.connect(t)
	cat := srv.catalogConn(t)
	wh := v.whRel

	// Sentinels: what each hostile name or value used to reach.
	mustExec(t, ctx, c,
		"CREATE SCHEMA pth", "CREATE SCHEMA pth_y",
		"CREATE TABLE pth_y.t (id bigint PRIMARY KEY, v text)", "INSERT INTO pth_y.t VALUES (1, 'y')",
		"CREATE TABLE pth.t (id bigint PRIMARY KEY, v text)", "INSERT INTO pth.t VALUES (1, 't')",
		"CREATE TABLE pth.a (id bigint PRIMARY KEY, v text)", "INSERT INTO pth.a VALUES (1, 'a')",
		"CREATE TABLE pth.x (id bigint PRIMARY KEY, v text)", "INSERT INTO pth.x VALUES (1, 'x')",
		"CREATE TABLE pth.keep (id bigint PRIMARY KEY, v text)", "INSERT INTO pth.keep VALUES (1, 'keep')")
	v.put(t, "pth_sentinel/keep.txt")
	v.put(t, wh+"/keep.txt")
	sentinelDirs := []string{"pth_sentinel", wh + "/pth_y", wh + "/pth/t", wh + "/pth/a", wh + "/pth/x", wh + "/pth/keep"}
	// The warehouse root holds only namespace directories and keep.txt;
	// other tests add namespaces of their own, so only its files count.
	snapshot := func() []string {
		var out []string
		for _, d := range sentinelDirs {
			out = append(out, v.list(t, d)...)
		}
		return append(out, v.top(t, wh)...)
	}
	before := snapshot()
	if !slices.Contains(before, "pth_sentinel/keep.txt") || !slices.Contains(before, wh+"/keep.txt") || len(before) < 7 {
		t.Fatalf("sentinels not in place: %q", before)
	}
	sentinelRows := map[string]string{"pth_y.t": "1|y", "pth.t": "1|t", "pth.a": "1|a", "pth.x": "1|x", "pth.keep": "1|keep"}
	checkSentinels := func(after string) {
		t.Helper()
		if got := snapshot(); !slices.Equal(got, before) {
			t.Fatalf("after %s the sentinels changed:\n got  %q\n want %q", after, got, before)
		}
		for tbl, row := range sentinelRows {
			wantRows(t, tbl+" after "+after, queryStrings(t, ctx, c, "SELECT id, v FROM "+tbl+" ORDER BY id"), []string{row})
		}
	}
	tablePath := func(ns, name string) string {
		t.Helper()
		var p string
		if err := cat.QueryRow(ctx, "SELECT table_path FROM table_info WHERE table_namespace = $1 AND table_name = $2",
			ns, name).Scan(&p); err != nil {
			t.Fatalf("table_path of %s.%s: %v", ns, name, err)
		}
		return p
	}
	// filesOf lists a table's data files as the catalog has them, and
	// checks each is inside its directory.
	filesOf := func(ns, name string) []string {
		t.Helper()
		dir := tablePath(ns, name)
		var files []string
		rows, err := cat.Query(ctx, `SELECT DISTINCT o.path FROM data_commit_info d CROSS JOIN LATERAL unnest(d.file_ops) o
			JOIN table_info t USING (table_id) WHERE t.table_namespace = $1 AND t.table_name = $2 ORDER BY 1`, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if files, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel, ok := strings.CutPrefix(f, dir+"/")
			if !ok || strings.Contains("/"+rel+"/", "/../") || strings.Contains("/"+rel+"/", "/./") {
				t.Errorf("data file %s of %s.%q is not inside %s", f, ns, name, dir)
			}
		}
		return files
	}

	// Every hostile name is a table of its own, fully usable, in its own
	// escaped directory.
	for _, h := range hostileNames {
		q := pgx.Identifier{"pth", h.name}.Sanitize()
		mustExec(t, ctx, c,
			"CREATE TABLE "+q+" (id bigint PRIMARY KEY, v text)",
			"INSERT INTO "+q+" VALUES (1, 'one'), (2, 'two')",
			"INSERT INTO "+q+" (id, v) VALUES (2, 'zwei')")
		wantRows(t, q, queryStrings(t, ctx, c, "SELECT id, v FROM "+q+" ORDER BY id"), []string{"1|one", "2|zwei"})
		if got, want := tablePath("pth", h.name), v.wh+"/pth/"+h.dir; got != want {
			t.Errorf("table_path of %s = %q, want %q (it used to reach %s)", q, got, want, h.target)
		}
		if files := filesOf("pth", h.name); len(files) == 0 {
			t.Errorf("no data files of %s", q)
		}
		if objs := v.list(t, wh+"/pth/"+h.dir); len(objs) == 0 {
			t.Errorf("no objects in the directory of %s (%s)", q, wh+"/pth/"+h.dir)
		}
	}
	wantRows(t, "lakesoul.tables of pth",
		queryStrings(t, ctx, c, "SELECT table_name FROM lakesoul.tables WHERE table_schema = 'pth' ORDER BY table_name COLLATE \"C\""),
		[]string{"%2e%2e/pth_y", ".", "..", "../../../pth_sentinel", "a", "a/b", "keep", "q?x=1", "t", "t#frag", "x"})
	checkSentinels("creating and writing the hostile tables")

	// Partition values: one escaped directory each, inside the table.
	mustExec(t, ctx, c, "CREATE TABLE pth.p (id bigint PRIMARY KEY, v text, w int) PARTITION BY LIST (v)")
	var wantP []string
	for i, h := range hostileValues {
		if _, err := c.Exec(ctx, "INSERT INTO pth.p VALUES ($1, $2, 1)", i, h.value); err != nil {
			t.Fatalf("insert partition value %q: %v", h.value, err)
		}
		wantP = append(wantP, h.value)
	}
	mustExec(t, ctx, c, "INSERT INTO pth.p (id, v, w) SELECT id, v, w + 1 FROM pth.p") // a second version per partition
	wantRows(t, "pth.p", queryStrings(t, ctx, c, "SELECT v FROM pth.p ORDER BY id"), wantP)
	for _, h := range hostileValues {
		wantRows(t, "pth.p where v = "+h.value, queryStrings(t, ctx, c, "SELECT v, w FROM pth.p WHERE v = $1", h.value),
			[]string{h.value + "|2"})
	}
	pDir := tablePath("pth", "p")
	var dirs []string
	for _, f := range filesOf("pth", "p") {
		rel := strings.TrimPrefix(f, pDir+"/")
		dirs = append(dirs, rel[:strings.LastIndexByte(rel, '/')])
	}
	dirs = slices.Compact(slices.Sorted(slices.Values(dirs)))
	var wantDirs []string
	for _, h := range hostileValues {
		wantDirs = append(wantDirs, h.dir)
	}
	slices.Sort(wantDirs)
	wantRows(t, "partition directories of pth.p", dirs, wantDirs)
	checkSentinels("writing the hostile partition values")

	// Refused: names that cannot be partition directories.
	if _, err := c.Exec(ctx, `CREATE TABLE pth.q (a int, "b=c" int) PARTITION BY LIST ("b=c")`); pgCode(err) != "42P16" {
		t.Errorf("a partition column named b=c: SQLSTATE %q (%v), want 42P16", pgCode(err), err)
	}
	if _, err := c.Exec(ctx, "INSERT INTO pth.p VALUES (100, repeat('/', 200), 1)"); pgCode(err) != "54000" {
		t.Errorf("a partition value whose directory is longer than a file name: SQLSTATE %q (%v), want 54000", pgCode(err), err)
	}
	wantRows(t, "pth.p after the refused insert", queryStrings(t, ctx, c, "SELECT count(*) FROM pth.p"), []string{"6"})

	// Compaction writes below the table too; cleanup then deletes the
	// replaced files, only inside the table.
	mustExec(t, ctx, c, "CALL lakesoul.compact('pth.p')")
	before5 := filesOf("pth", "p")
	mustExec(t, ctx, c, "CALL lakesoul.cleanup('pth.p', now() + interval '1 hour')")
	if after := filesOf("pth", "p"); len(after) >= len(before5) {
		t.Errorf("cleanup after compaction removed no commit: %d files before, %d after", len(before5), len(after))
	}
	wantRows(t, "pth.p after compaction and cleanup", queryStrings(t, ctx, c, "SELECT v FROM pth.p ORDER BY id"), wantP)
	checkSentinels("compaction and cleanup")

	mustExec(t, ctx, c, "CALL lakesoul.drop_partition('pth.p', 'v=/../../x')")
	wantRows(t, "pth.p after drop_partition", queryStrings(t, ctx, c, "SELECT v FROM pth.p ORDER BY id"), wantP[1:])
	checkSentinels("drop_partition of v=/../../x")

	// DROP TABLE removes each table's own directory and nothing else.
	for _, h := range hostileNames {
		q := pgx.Identifier{"pth", h.name}.Sanitize()
		mustExec(t, ctx, c, "DROP TABLE "+q)
		if objs := v.list(t, wh+"/pth/"+h.dir); len(objs) != 0 {
			t.Errorf("objects of %s left after DROP TABLE: %q", q, objs)
		}
		checkSentinels("DROP TABLE " + q)
	}
	mustExec(t, ctx, c, "DROP TABLE pth.p")
	checkSentinels("DROP TABLE pth.p")

	// DROP SCHEMA … CASCADE of a schema full of hostile names.
	mustExec(t, ctx, c, "CREATE SCHEMA pth2")
	for _, name := range []string{"..", ".", "../pth_y", "../../..", "t#frag"} {
		q := pgx.Identifier{"pth2", name}.Sanitize()
		mustExec(t, ctx, c, "CREATE TABLE "+q+" (id bigint, v text)", "INSERT INTO "+q+" VALUES (1, 'x')")
	}
	mustExec(t, ctx, c, "CREATE TABLE pth2.p (id bigint, v text) PARTITION BY LIST (v)",
		"INSERT INTO pth2.p VALUES (1, '/../../../pth_y'), (2, '..')")
	if objs := v.list(t, wh+"/pth2"); len(objs) < 6 {
		t.Fatalf("objects of schema pth2: %q", objs)
	}
	mustExec(t, ctx, c, "DROP SCHEMA pth2 CASCADE")
	if objs := v.list(t, wh+"/pth2"); len(objs) != 0 {
		t.Errorf("objects of schema pth2 left after DROP SCHEMA CASCADE: %q", objs)
	}
	checkSentinels("DROP SCHEMA pth2 CASCADE")

	// And the sentinel schemas themselves: what is outside stays.
	mustExec(t, ctx, c, "DROP SCHEMA pth CASCADE")
	delete(sentinelRows, "pth.t")
	delete(sentinelRows, "pth.a")
	delete(sentinelRows, "pth.x")
	delete(sentinelRows, "pth.keep")
	sentinelDirs = []string{"pth_sentinel", wh + "/pth_y"}
	before = slices.DeleteFunc(before, func(f string) bool { return strings.HasPrefix(f, wh+"/pth/") })
	checkSentinels("DROP SCHEMA pth CASCADE")
}

// TestForgedCatalogPaths: users of a workspace can write the catalog rows of
// their own domain directly, so a table's table_path or a data_commit_info
// row may name another table's files. The server must then neither read
// them (42501) nor delete them (DROP TABLE, cleanup). Here the catalog's
// superuser writes the forged rows; before the fix the first SELECT
// returned the victim's rows and DROP TABLE removed the victim's directory.
func TestForgedCatalogPaths(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	c := srv.connect(t)
	cat := srv.catalogConn(t)
	mustExec(t, ctx, c,
		"CREATE SCHEMA pfg",
		"CREATE TABLE pfg.victim (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 1)",
		"INSERT INTO pfg.victim VALUES (1, 'secret')",
		"CREATE TABLE pfg.reader (id bigint PRIMARY KEY, v text) WITH (hash_bucket_num = 1)",
		"INSERT INTO pfg.reader VALUES (1, 'mine')",
		"CREATE TABLE pfg.app (id bigint, v text)", "INSERT INTO pfg.app VALUES (1, 'mine')",
		"CREATE TABLE pfg.dropme (id bigint PRIMARY KEY, v text)", "INSERT INTO pfg.dropme VALUES (1, 'mine')",
		"CREATE TABLE pfg.cleaner (id bigint, v text)", "INSERT INTO pfg.cleaner VALUES (1, 'a'), (2, 'b')",
		"DELETE FROM pfg.cleaner WHERE id = 1") // an UpdateCommit: the first commit's file is history now
	victimDir := filepath.Join(srv.dataDir, "warehouse", "pfg", "victim")
	victimFiles := filesUnder(t, victimDir)
	if len(victimFiles) != 1 {
		t.Fatalf("files of pfg.victim: %q", victimFiles)
	}
	checkVictim := func(after string) {
		t.Helper()
		if got := filesUnder(t, victimDir); !slices.Equal(got, victimFiles) {
			t.Fatalf("after %s the victim's files are %q, want %q", after, got, victimFiles)
		}
		wantRows(t, "pfg.victim after "+after, queryStrings(t, ctx, c, "SELECT id, v FROM pfg.victim"), []string{"1|secret"})
	}
	forge := func(sql string, args ...any) {
		t.Helper()
		if _, err := cat.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("forge %s: %v", sql, err)
		}
	}
	idOf := func(name string) string {
		t.Helper()
		var id string
		if err := cat.QueryRow(ctx, "SELECT table_id FROM table_info WHERE table_namespace = 'pfg' AND table_name = $1", name).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	victimPath := "file://" + filepath.Join(victimDir, victimFiles[0])

	// Commit rows of one's own tables naming the victim's file: refused on
	// read, through the merge (PK table) and DuckDB's native scan (append
	// table) alike.
	for _, name := range []string{"reader", "app"} {
		forge(`UPDATE data_commit_info SET file_ops = ARRAY[ROW($1, 'add', 1, 'id,v')::data_file_op] WHERE table_id = $2`,
			victimPath, idOf(name))
		rows, err := tryQueryStrings(ctx, c, "SELECT id, v FROM pfg."+name)
		if pgCode(err) != "42501" {
			t.Errorf("SELECT from pfg.%s with a commit naming the victim's file: %q, SQLSTATE %q (%v), want 42501", name, rows, pgCode(err), err)
		}
	}
	checkVictim("reading through forged commits")

	// A table_path naming the victim's directory: the table is refused, and
	// DROP TABLE drops its rows but leaves the victim's directory alone.
	forge("UPDATE table_info SET table_path = $1 WHERE table_id = $2", objstore.LocalURI(victimDir), idOf("dropme"))
	for _, q := range []string{"SELECT * FROM pfg.dropme", "INSERT INTO pfg.dropme VALUES (2, 'x')"} {
		if _, err := c.Exec(ctx, q); pgCode(err) != "42501" {
			t.Errorf("%s with a forged table_path: SQLSTATE %q (%v), want 42501", q, pgCode(err), err)
		}
	}
	mustExec(t, ctx, c, "DROP TABLE pfg.dropme")
	if _, err := c.Exec(ctx, "SELECT * FROM pfg.dropme"); pgCode(err) != "42P01" {
		t.Errorf("pfg.dropme after DROP TABLE: SQLSTATE %q (%v), want 42P01", pgCode(err), err)
	}
	checkVictim("DROP TABLE of a table whose path names the victim's directory")

	// A history commit naming the victim's file: cleanup forgets the
	// commit but does not delete the file.
	var first string
	if err := cat.QueryRow(ctx, `SELECT commit_id::text FROM data_commit_info WHERE table_id = $1 ORDER BY timestamp LIMIT 1`,
		idOf("cleaner")).Scan(&first); err != nil {
		t.Fatal(err)
	}
	forge(`UPDATE data_commit_info SET file_ops = ARRAY[ROW($1, 'add', 1, 'id,v')::data_file_op] WHERE commit_id = $2::uuid`,
		victimPath, first)
	mustExec(t, ctx, c, "CALL lakesoul.cleanup('pfg.cleaner', now() + interval '1 hour')")
	wantRows(t, "pfg.cleaner after cleanup", queryStrings(t, ctx, c, "SELECT id, v FROM pfg.cleaner"), []string{"2|b"})
	var left int
	if err := cat.QueryRow(ctx, "SELECT count(*) FROM data_commit_info WHERE commit_id = $1::uuid", first).Scan(&left); err != nil || left != 0 {
		t.Errorf("cleanup kept the forged history commit (%d rows, %v): the test did not reach the delete", left, err)
	}
	checkVictim("cleanup of a history commit naming the victim's file")
	mustExec(t, ctx, c, "DROP SCHEMA pfg CASCADE")
}

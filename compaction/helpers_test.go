package compaction_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/reader"
	"github.com/lakesoul-go/lakesoul/writer"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// env is a migrated catalog on a fresh database and a warehouse on local disk.
type env struct {
	t     testing.TB
	dsn   string
	cat   *catalog.Catalog
	store objstore.Store
	wh    string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cat.Close)
	return &env{t: t, dsn: dsn, cat: cat, store: objstore.Local{}, wh: t.TempDir()}
}

var (
	idF  = arrow.Field{Name: "id", Type: arrow.PrimitiveTypes.Int64}
	vF   = arrow.Field{Name: "v", Type: arrow.BinaryTypes.String, Nullable: true}
	nF   = arrow.Field{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}
	dF   = arrow.Field{Name: "d", Type: arrow.BinaryTypes.String, Nullable: true}
	opF  = arrow.Field{Name: "op", Type: arrow.BinaryTypes.String, Nullable: true}
	cols = []arrow.Field{idF, vF, nF, dF}
)

// table creates s.<name>(id bigint PK, v text, n bigint, d text) partitioned
// by d (when partitioned) with buckets buckets and the given properties.
func (e *env) table(name string, fields []arrow.Field, partitioned bool, buckets int, props map[string]string) *catalog.Table {
	e.t.Helper()
	ctx := context.Background()
	if ok, _ := e.cat.NamespaceExists(ctx, "s"); !ok {
		if err := e.cat.CreateNamespace(ctx, "s"); err != nil {
			e.t.Fatal(err)
		}
	}
	if props == nil {
		props = map[string]string{}
	}
	tbl := &catalog.Table{ID: "table_" + uuid.NewString(), Namespace: "s", Name: name,
		Path: objstore.LocalURI(filepath.Join(e.wh, "s", name)), Schema: arrow.NewSchema(fields, nil),
		PKCols: []string{"id"}, HashBucketNum: buckets, Properties: props}
	if partitioned {
		tbl.RangeCols = []string{"d"}
	}
	if buckets < 1 {
		tbl.PKCols, tbl.HashBucketNum = nil, -1
	}
	if err := e.cat.CreateTable(ctx, tbl); err != nil {
		e.t.Fatal(err)
	}
	got, err := e.cat.TableByName(ctx, "s", name)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

// batch builds a record of the named columns of tbl from rows (nil = NULL).
func batch(tbl *catalog.Table, names []string, rows [][]any) arrow.RecordBatch {
	var fields []arrow.Field
	for _, c := range names {
		fields = append(fields, tbl.Schema.Field(tbl.Schema.FieldIndices(c)[0]))
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, arrow.NewSchema(fields, nil))
	defer b.Release()
	for _, r := range rows {
		for i, v := range r {
			if v == nil {
				b.Field(i).AppendNull()
				continue
			}
			switch fb := b.Field(i).(type) {
			case *array.Int64Builder:
				fb.Append(int64(v.(int)))
			case *array.StringBuilder:
				fb.Append(v.(string))
			default:
				panic(fmt.Sprintf("builder %T", fb))
			}
		}
	}
	return b.NewRecordBatch()
}

// write writes rows and commits them with op; it returns the versions.
func (e *env) write(tbl *catalog.Table, op string, names []string, rows ...[]any) map[string]int {
	e.t.Helper()
	v, err := e.tryWrite(tbl, op, names, rows...)
	if err != nil {
		e.t.Fatalf("write: %v", err)
	}
	return v
}

func (e *env) tryWrite(tbl *catalog.Table, op string, names []string, rows ...[]any) (map[string]int, error) {
	ctx := context.Background()
	rec := batch(tbl, names, rows)
	defer rec.Release()
	w := &writer.Writer{Store: e.store, Table: tbl, Intent: layout.RandomNames{}}
	parts, err := w.Write(ctx, rec)
	if err != nil {
		return nil, err
	}
	return e.cat.Commit(ctx, nil, tbl.ID, op, parts)
}

// upsert writes full rows (id, v, n, d) as a MergeCommit.
func (e *env) upsert(tbl *catalog.Table, rows ...[]any) map[string]int {
	e.t.Helper()
	var names []string
	for _, f := range tbl.Schema.Fields() {
		names = append(names, f.Name)
	}
	return e.write(tbl, catalog.MergeCommit, names, rows...)
}

// read returns the table's rows as sorted "c=v …" strings.
func (e *env) read(tbl *catalog.Table) []string {
	e.t.Helper()
	parts, err := e.cat.LiveFiles(context.Background(), tbl.ID, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return readFiles(e.t, e.store, tbl, parts, false)
}

func readFiles(t testing.TB, store objstore.Store, tbl *catalog.Table, parts []catalog.PartitionFiles, keepDeletes bool) []string {
	t.Helper()
	scan := &reader.Scan{Store: store, Table: tbl, Partitions: parts, KeepCDCDeletes: keepDeletes}
	units, err := scan.Units()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, u := range units {
		it, err := scan.Open(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		for {
			b, err := it.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, rowStrings(b)...)
			b.Release()
		}
		it.Close()
	}
	sort.Strings(out)
	return out
}

func rowStrings(b arrow.RecordBatch) []string {
	var out []string
	for r := 0; r < int(b.NumRows()); r++ {
		var cells []string
		for c := 0; c < int(b.NumCols()); c++ {
			col := b.Column(c)
			v := "NULL"
			if !col.IsNull(r) {
				v = col.ValueStr(r)
			}
			cells = append(cells, b.ColumnName(c)+"="+v)
		}
		out = append(out, strings.Join(cells, " "))
	}
	return out
}

// rawRows reads one data file as it is (no merge), as "c=v …" strings in
// file order.
func rawRows(t testing.TB, store objstore.Store, tbl *catalog.Table, desc string, f catalog.DataFile) []string {
	t.Helper()
	// A unit of one file of an append-like view of the table: no merge.
	raw := *tbl
	raw.PKCols = nil
	return readFiles(t, store, &raw, []catalog.PartitionFiles{{Desc: desc, Files: []catalog.DataFile{f}}}, true)
}

// files returns the live files of one partition.
func (e *env) files(tbl *catalog.Table, desc string) catalog.PartitionFiles {
	e.t.Helper()
	parts, err := e.cat.LiveFiles(context.Background(), tbl.ID, []string{desc})
	if err != nil {
		e.t.Fatal(err)
	}
	if len(parts) == 0 {
		return catalog.PartitionFiles{Desc: desc, Version: -1}
	}
	return parts[0]
}

// scalar runs a query returning one value.
func (e *env) scalar(sql string, args ...any) any {
	e.t.Helper()
	var v any
	if err := e.cat.Pool().QueryRow(context.Background(), sql, args...).Scan(&v); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return v
}

func (e *env) count(sql string, args ...any) int64 {
	e.t.Helper()
	var n int64
	if err := e.cat.Pool().QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func expectSame(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\ngot  (%d rows):\n%s\nwant (%d rows):\n%s", what, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
}

func newID() uuid.UUID { return uuid.New() }

func localStore() objstore.Store { return objstore.Local{} }

package engine_test

import (
	"context"
	"fmt"
	"io"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestPartialWriteOfAbsentKey: every write path that may write only some
// columns of a primary-key table (INSERT with a column list, from VALUES
// and from a query, ON CONFLICT DO NOTHING and DO UPDATE's insert arm,
// MERGE's INSERT, COPY with a column list, Arrow ingest of fewer columns),
// on keyed and CDC tables, for a key never written, a key deleted (its
// delete marker live or compacted away) and a key present. A key that is
// absent reads the left-out column as PostgreSQL's INSERT leaves it (NULL,
// its default); one present keeps its value (LakeSoul's partial upsert, or
// the row ON CONFLICT / MERGE leave alone). With the left-out column NOT
// NULL, an absent key is 23502.
func TestPartialWriteOfAbsentKey(t *testing.T) {
	s := newSession(t)
	ctx := context.Background()
	ingest := func(table string) error {
		sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil)
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		defer b.Release()
		b.Field(0).(*array.Int32Builder).Append(1)
		b.Field(1).(*array.Int32Builder).Append(2)
		rec := b.NewRecordBatch()
		defer rec.Release()
		sent := false
		_, err := s.(*engine.Session).IngestArrow(ctx, "", table, func() (arrow.RecordBatch, error) {
			if sent {
				return nil, io.EOF
			}
			sent = true
			return rec, nil
		})
		return err
	}
	paths := []struct {
		name  string
		write func(table string) error
	}{
		{"insert values", func(tb string) error {
			_, err := run(t, s, fmt.Sprintf(`INSERT INTO %s (id, v) VALUES (1, 2)`, tb))
			return err
		}},
		{"insert select", func(tb string) error {
			_, err := run(t, s, fmt.Sprintf(`INSERT INTO %s (id, v) SELECT g, g + 1 FROM generate_series(1, 1) AS g`, tb))
			return err
		}},
		{"on conflict do nothing", func(tb string) error {
			_, err := run(t, s, fmt.Sprintf(`INSERT INTO %s (id, v) VALUES (1, 2) ON CONFLICT DO NOTHING`, tb))
			return err
		}},
		{"on conflict do update", func(tb string) error {
			_, err := run(t, s, fmt.Sprintf(`INSERT INTO %s (id, v) VALUES (1, 2) ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v`, tb))
			return err
		}},
		{"merge insert", func(tb string) error {
			_, err := run(t, s, fmt.Sprintf(`MERGE INTO %s t USING (SELECT 1 AS id, 2 AS v) AS src ON t.id = src.id
				WHEN MATCHED THEN UPDATE SET v = src.v WHEN NOT MATCHED THEN INSERT (id, v) VALUES (src.id, src.v)`, tb))
			return err
		}},
		{"copy", func(tb string) error {
			_, err := copyIn(t, s, fmt.Sprintf(`COPY %s (id, v) FROM STDIN`, tb), [][][]byte{row("1", "2")})
			return err
		}},
		{"arrow ingest", ingest},
	}
	states := []struct {
		name    string
		prepare func(tb string) // from an empty table
		present bool
	}{
		{"never written", func(string) {}, false},
		{"deleted", func(tb string) {
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s (id, c, v) VALUES (1, 'x', 1)`, tb))
			mustRun(t, s, fmt.Sprintf(`DELETE FROM %s WHERE id = 1`, tb))
		}, false},
		{"deleted and compacted", func(tb string) {
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s (id, c, v) VALUES (1, 'x', 1)`, tb))
			mustRun(t, s, fmt.Sprintf(`DELETE FROM %s WHERE id = 1`, tb))
			mustRun(t, s, fmt.Sprintf(`CALL lakesoul.compact('%s')`, tb))
		}, false},
		{"deleted in a block", func(tb string) {
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s (id, c, v) VALUES (1, 'x', 1)`, tb))
			mustRun(t, s, `BEGIN`)
			mustRun(t, s, fmt.Sprintf(`DELETE FROM %s WHERE id = 1`, tb))
		}, false},
		{"present", func(tb string) {
			mustRun(t, s, fmt.Sprintf(`INSERT INTO %s (id, c, v) VALUES (1, 'x', 1)`, tb))
		}, true},
	}
	kinds := []struct{ name, with string }{
		{"keyed", ""},
		{"cdc", ", op text) WITH (cdc_column = 'op'"},
	}
	n := 0
	for _, kind := range kinds {
		for _, notNull := range []bool{false, true} {
			for _, st := range states {
				for _, p := range paths {
					n++
					tb := fmt.Sprintf("pw%d", n)
					cons := ""
					if notNull {
						cons = " NOT NULL"
					}
					mustRun(t, s, fmt.Sprintf(`CREATE TABLE %s (id int PRIMARY KEY, c text%s, v int%s)`, tb, cons, kind.with))
					// Another row keeps the partition from emptying (an
					// emptied partition is a separate matter of rmw.go).
					mustRun(t, s, fmt.Sprintf(`INSERT INTO %s (id, c, v) VALUES (9, 'y', 9)`, tb))
					st.prepare(tb)
					err := p.write(tb)
					if st.name == "deleted in a block" {
						if err == nil {
							mustRun(t, s, `COMMIT`)
						} else {
							mustRun(t, s, `ROLLBACK`)
						}
					}
					name := fmt.Sprintf("%s, c%s, %s key, %s", kind.name, cons, st.name, p.name)
					switch {
					case st.present:
						if err != nil {
							t.Errorf("%s: %v", name, err)
							continue
						}
						if got := mustRun(t, s, fmt.Sprintf(`SELECT id, c FROM %s WHERE id = 1`, tb)); len(got) != 1 || got[0] != "1|x" {
							t.Errorf("%s: got %v, want [1|x]", name, got)
						}
					case notNull:
						if sqlerr.Code(err) != sqlerr.NotNullViolation {
							t.Errorf("%s: got %v, want 23502", name, err)
						}
					default:
						if err != nil {
							t.Errorf("%s: %v", name, err)
							continue
						}
						if got := mustRun(t, s, fmt.Sprintf(`SELECT id, c, v FROM %s WHERE id = 1`, tb)); len(got) != 1 || got[0] != "1|NULL|2" {
							t.Errorf("%s: got %v, want [1|NULL|2]", name, got)
						}
					}
				}
			}
		}
	}
}

package engine_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/lakesoul-go/lakesoul/engine"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestCharAssignmentEveryPath: a value written into a varchar(n), char(n)
// or char column is stored alike (or refused with the same SQLSTATE) by
// INSERT, COPY and Arrow ingest, for values that fit, are longer by spaces
// only, are longer, carry trailing spaces or are multi-byte.
func TestCharAssignmentEveryPath(t *testing.T) {
	s := newSession(t)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE ca (id int PRIMARY KEY, v text)`)
	cols := []string{"varchar(3)", "character varying(3)", "char(3)", "character(3)", "char", "bpchar"}
	values := []string{"", "ab", "abc", "abc  ", "abcd", "ab ", " a", "a  ", "äöü", "äöü ", "äöüx", " ", "x  y"}
	id := 0
	outcome := func(table string, err error) string {
		if err != nil {
			return "error " + sqlerr.Code(err)
		}
		return strings.Join(mustRun(t, s, fmt.Sprintf(`SELECT v || '|', length(v) FROM %s`, table)), ";")
	}
	for _, typ := range cols {
		for _, v := range values {
			id++
			var got []string
			for _, path := range []string{"insert", "copy", "arrow ingest"} {
				tb := fmt.Sprintf("ca%d_%s", id, strings.ReplaceAll(path, " ", "_"))
				mustRun(t, s, fmt.Sprintf(`CREATE TABLE %s (id int PRIMARY KEY, v %s)`, tb, typ))
				var err error
				switch path {
				case "insert":
					_, err = run(t, s, fmt.Sprintf(`INSERT INTO %s VALUES (1, $1)`, tb), v)
				case "copy":
					_, err = copyIn(t, s, fmt.Sprintf(`COPY %s (id, v) FROM STDIN`, tb), [][][]byte{row("1", v)})
				case "arrow ingest":
					sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int32}, {Name: "v", Type: arrow.BinaryTypes.String}}, nil)
					b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
					b.Field(0).(*array.Int32Builder).Append(1)
					b.Field(1).(*array.StringBuilder).Append(v)
					rec := b.NewRecordBatch()
					b.Release()
					sent := false
					_, err = s.(*engine.Session).IngestArrow(ctx, "", tb, func() (arrow.RecordBatch, error) {
						if sent {
							return nil, io.EOF
						}
						sent = true
						return rec, nil
					})
					rec.Release()
				}
				got = append(got, path+": "+outcome(tb, err))
			}
			for _, g := range got[1:] {
				if strings.SplitN(g, ": ", 2)[1] != strings.SplitN(got[0], ": ", 2)[1] {
					t.Errorf("%s ← %q: %s", typ, v, strings.Join(got, ", "))
					break
				}
			}
		}
	}
}

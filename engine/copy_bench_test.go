package engine_test

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"testing"

	"github.com/lakesoul-go/lakesoul/pgwire"
)

// genRows is a CopyRowReader of n ccf-like rows (8 text fields, one of them
// numeric), as pgwire would hand them over for COPY … FROM STDIN (text).
// The rows are generated once and replayed, so the benchmark measures the
// server side only.
type genRows struct {
	rows [][][]byte
	i    int
}

func newGenRows(n int) *genRows {
	g := &genRows{rows: make([][][]byte, n)}
	for i := range g.rows {
		g.rows[i] = [][]byte{
			fmt.Appendf(nil, "%08x-%04x-4000-8000-%012x", i*2654435761%(1<<32), i%65536, i),
			fmt.Appendf(nil, "10.0.%d.%d", i%256, i%100),
			fmt.Appendf(nil, "host%d", i%1000),
			strconv.AppendInt(nil, int64(i), 10),
			fmt.Appendf(nil, "name%d", i),
			fmt.Appendf(nil, "city%d", i%50),
			fmt.Appendf(nil, "job%d", i%30),
			fmt.Appendf(nil, "555-%07d", i),
		}
	}
	return g
}

func (g *genRows) ReadRow() ([][]byte, error) {
	if g.i >= len(g.rows) {
		return nil, io.EOF
	}
	g.i++
	return g.rows[g.i-1], nil
}

func (g *genRows) Line() int64 { return int64(g.i) }

// BenchmarkCopyIn measures the COPY FROM path below the wire: field
// conversion, Arrow batches, bucketing, PK sort, Parquet, commit.
func BenchmarkCopyIn(b *testing.B) {
	s := fuzzSession(b)
	ctx := context.Background()
	execSQL(b, s, "CREATE SCHEMA bench")
	execSQL(b, s, `CREATE TABLE bench.ccf (uuid text, ip text, hostname text, requests bigint, name text, city text,
		job text, phonenum text, PRIMARY KEY (uuid)) WITH (hash_bucket_num = 4)`)
	const n = 500000
	rows := newGenRows(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		stmts, err := s.Parse(ctx, "COPY bench.ccf FROM STDIN", nil)
		if err != nil {
			b.Fatal(err)
		}
		p, err := stmts[0].Bind(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		rows.i = 0
		tag, err := p.(pgwire.CopyInPortal).CopyIn(ctx, rows)
		if err != nil || tag != fmt.Sprintf("COPY %d", n) {
			b.Fatal(tag, err)
		}
		p.Close()
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "rows/s")
}

func execSQL(tb testing.TB, s pgwire.Session, q string) {
	tb.Helper()
	ctx := context.Background()
	stmts, err := s.Parse(ctx, q, nil)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := stmts[0].Bind(ctx, nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer p.Close()
	if _, _, err := p.Execute(ctx, 0, nopRows{}); err != nil {
		tb.Fatal(err)
	}
}

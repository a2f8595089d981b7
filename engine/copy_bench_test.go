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
type genRows struct {
	n, i   int
	fields [][]byte
	bufs   [8][]byte
}

func (g *genRows) ReadRow() ([][]byte, error) {
	if g.i >= g.n {
		return nil, io.EOF
	}
	i := g.i
	g.i++
	g.bufs[0] = fmt.Appendf(g.bufs[0][:0], "%08x-%04x-4000-8000-%012x", i*2654435761%(1<<32), i%65536, i)
	g.bufs[1] = fmt.Appendf(g.bufs[1][:0], "10.0.%d.%d", i%256, i%100)
	g.bufs[2] = fmt.Appendf(g.bufs[2][:0], "host%d", i%1000)
	g.bufs[3] = strconv.AppendInt(g.bufs[3][:0], int64(i), 10)
	g.bufs[4] = fmt.Appendf(g.bufs[4][:0], "name%d", i)
	g.bufs[5] = fmt.Appendf(g.bufs[5][:0], "city%d", i%50)
	g.bufs[6] = fmt.Appendf(g.bufs[6][:0], "job%d", i%30)
	g.bufs[7] = fmt.Appendf(g.bufs[7][:0], "555-%07d", i)
	g.fields = g.fields[:0]
	for k := range g.bufs {
		g.fields = append(g.fields, g.bufs[k])
	}
	return g.fields, nil
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
		tag, err := p.(pgwire.CopyInPortal).CopyIn(ctx, &genRows{n: n})
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

package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkAppendTableScan reads an append table of 1 M rows (four files:
// one COPY-sized insert and three smaller ones) through the engine: a
// count, an aggregate over every column (DuckDB over lakesoul_scan), a
// selective filter and every row (direct scans).
func BenchmarkAppendTableScan(b *testing.B) {
	b.Setenv("LAKESOUL_POISON_FREED", "") // poison_test.go: timing without it
	s := newSessionAt(b, filepath.Join(b.TempDir(), "wh"))
	ctx := context.Background()
	exec := func(q string) {
		b.Helper()
		stmts, err := s.Parse(ctx, q, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, st := range stmts {
			p, err := st.Bind(ctx, nil)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := p.Execute(ctx, 0, countRows{}); err != nil {
				b.Fatal(err)
			}
			p.Close()
		}
	}
	exec(`CREATE TABLE a (id text, ip text, host text, requests bigint, name text, city text, job text, phone text)`)
	for _, r := range [][2]int{{0, 700000}, {700000, 800000}, {800000, 900000}, {900000, 1000000}} {
		exec(fmt.Sprintf(`INSERT INTO a SELECT md5(i::text), (i %% 256)::text || '.' || (i %% 97)::text, 'host-' || (i %% 1000)::text,
			(i * 7919) %% 100000, 'name' || (i %% 5000)::text, 'city' || (i %% 300)::text, 'job' || (i %% 40)::text,
			'+86-' || lpad(i::text, 11, '0') FROM range(%d, %d) AS r(i)`, r[0], r[1]))
	}
	for _, q := range []struct{ name, sql string }{
		{"count", "SELECT count(*) FROM a"},
		{"agg", "SELECT count(*), min(id), max(ip), min(host), sum(requests), max(name), min(city), max(job), min(phone) FROM a"},
		{"filter", "SELECT * FROM a WHERE requests < 200"},
		{"read", "SELECT * FROM a"},
	} {
		b.Run(q.name, func(b *testing.B) {
			for b.Loop() {
				exec(q.sql)
			}
		})
	}
}

type countRows struct{}

func (countRows) WriteRow([]any) error { return nil }

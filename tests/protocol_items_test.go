package tests

import (
	"bytes"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestRecordsBinary: records (row constructors, nested, with NULL fields
// and fields of several types) reach clients that ask for binary results
// (asyncpg) in PostgreSQL's binary form, byte for byte what PostgreSQL 15
// sends for the same query, and in its text form.
func TestRecordsBinary(t *testing.T) {
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.catalogConn(t)
	for _, q := range []string{
		"SELECT row(1, 'a'::text)",
		"SELECT row(NULL::int, row(2.5::numeric, true), 'x'::varchar)",
		"SELECT (1::bigint, '2026-01-02'::date, '{1,2}'::int[]), row()",
		"SELECT r FROM (VALUES (row(1, 'q'::text)), (NULL)) v(r)",
	} {
		for _, format := range []int16{pgx.BinaryFormatCode, pgx.TextFormatCode} {
			get := func(c *pgx.Conn) [][]byte {
				t.Helper()
				rows, err := c.Query(ctx, q, pgx.QueryResultFormats{format})
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				defer rows.Close()
				var out [][]byte
				for rows.Next() {
					for _, v := range rows.RawValues() {
						out = append(out, append([]byte(nil), v...))
					}
				}
				if err := rows.Err(); err != nil {
					t.Fatalf("%s (format %d): %v", q, format, err)
				}
				return out
			}
			got, want := get(lake), get(ref)
			if len(got) != len(want) {
				t.Fatalf("%s (format %d): %q, want %q", q, format, got, want)
			}
			for i := range got {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("%s (format %d) value %d: %q, want %q", q, format, i, got[i], want[i])
				}
			}
		}
	}
}

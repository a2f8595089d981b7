package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/engine"
)

// TestNumericResultsEveryProtocol: numeric results whose display scale
// PostgreSQL picks per value (avg, division, variance, sums over CASE)
// reach every client as PostgreSQL's: the same type OID and typmod, the
// same bytes in the text and the binary format of the extended protocol
// as a real PostgreSQL sends for the same data, and over Flight SQL the
// same text in a string column marked numeric (numeric without a typmod
// has no Arrow decimal type of one scale).
func TestNumericResultsEveryProtocol(t *testing.T) {
	s, addr := flightServerT(t)
	ctx := testCtx(t)
	lake := s.connect(t)
	ref := s.referenceDB(t, "numref")
	setup := []string{
		"CREATE SCHEMA nr",
		"CREATE TABLE nr.t (id int, k int, x numeric(15,2), q bigint, PRIMARY KEY (id))",
		`INSERT INTO nr.t VALUES (1, 1, 17.00, 3), (2, 1, 36.00, 5), (3, 1, 8.00, 7), (4, 2, 28.00, 11),
			(5, 2, 24.00, 13), (6, 2, 32.00, 17), (7, 3, 0.01, 19), (8, 3, NULL, NULL), (9, 4, 123456789.99, 9000000000000000000)`,
	}
	mustExec(t, ctx, ref, setup...)
	mustExec(t, ctx, lake, setup...)
	queries := []string{
		`SELECT k, avg(x), sum(x) / sum(k), avg(q), sum(q), stddev(x), var_pop(q), avg(x) * 3 - 1 FROM nr.t GROUP BY k ORDER BY k`,
		`SELECT id, x / 7, q / x, -(x / id), 100.00 * sum(CASE WHEN k = 1 THEN x ELSE 0 END) OVER () / sum(x) OVER ()
			FROM nr.t ORDER BY id`,
	}
	pw, _ := s.adminPassword()
	cl, actx := mustFlight(t, ctx, addr, adminRole, pw)
	for _, q := range queries {
		for _, format := range []int16{0, 1} { // text, binary
			want := extendedResult(ctx, t, ref, q, format)
			got := extendedResult(ctx, t, lake, q, format)
			if got != want {
				t.Errorf("%s, format %d:\nlakesoul:\n%s\npostgres:\n%s", q, format, got, want)
			}
		}
		got, sc, err := flightRows(actx, cl, q)
		if err != nil {
			t.Fatalf("flight %s: %v", q, err)
		}
		wantRows(t, "flight "+q, got, pgxRowsText(t, ctx, ref, q))
		for i, f := range sc.Fields() {
			if i == 0 {
				continue
			}
			if oid, _ := f.Metadata.GetValue(engine.MetaPGTypeOID); oid != "1700" || f.Type.ID() != arrow.STRING {
				t.Errorf("flight %s: column %s is %s, oid %s; want utf8 of numeric (1700)", q, f.Name, f.Type, oid)
			}
		}
	}
}

// extendedResult runs q by the extended protocol with results in format
// (0 text, 1 binary) and renders the columns' names, types and typmods
// and the rows' bytes.
func extendedResult(ctx context.Context, t *testing.T, c *pgx.Conn, q string, format int16) string {
	t.Helper()
	res := c.PgConn().ExecParams(ctx, q, nil, nil, nil, []int16{format}).Read()
	if res.Err != nil {
		t.Fatalf("%s: %v", q, res.Err)
	}
	var b strings.Builder
	for _, f := range res.FieldDescriptions {
		fmt.Fprintf(&b, "%s:%d:%d|", f.Name, f.DataTypeOID, f.TypeModifier)
	}
	b.WriteString("\n")
	for _, row := range res.Rows {
		for _, v := range row {
			switch {
			case v == nil:
				b.WriteString("NULL|")
			case format == 0:
				fmt.Fprintf(&b, "%s|", v)
			default:
				fmt.Fprintf(&b, "%x|", v)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestNumericResultBeyondDecimal: DuckDB sums numeric in 128 bits;
// results whose sums fit are PostgreSQL's whatever their size (the
// division itself is exact in Go), and where a sum (of an avg, a
// division's operand, a variance's squares) does not fit, the statement
// fails with 22003 — PostgreSQL's numeric would go on, but a rounded or
// double answer is never given.
func TestNumericResultBeyondDecimal(t *testing.T) {
	s := sharedServer(t)
	ctx := testCtx(t)
	lake := s.connect(t)
	ref := s.catalogConn(t)
	mustExec(t, ctx, lake, "CREATE SCHEMA IF NOT EXISTS nrbig",
		"CREATE TABLE nrbig.t (id int, x numeric(38,0), PRIMARY KEY (id))",
		"INSERT INTO nrbig.t VALUES (1, 60000000000000000000000000000000000000), (2, 60000000000000000000000000000000000000)",
		"CREATE TABLE nrbig.u (id int, x numeric(38,0), PRIMARY KEY (id))",
		"INSERT INTO nrbig.u VALUES (1, 90000000000000000000000000000000000000), (2, 90000000000000000000000000000000000000)")
	values := "(VALUES (60000000000000000000000000000000000000::numeric(38,0)), (60000000000000000000000000000000000000)) t(x)"
	for _, agg := range []string{"avg(x)", "sum(x) / 3", "sum(x) / 7e40"} {
		got, err := textResult(ctx, lake, "SELECT "+agg+" FROM nrbig.t")
		want, werr := textResult(ctx, ref, "SELECT "+agg+" FROM "+values)
		if err != nil || werr != nil || got != want {
			t.Errorf("%s: lakesoul %q %v, postgres %q %v", agg, got, err, want, werr)
		}
	}
	for _, q := range []string{"SELECT avg(x) FROM nrbig.u", "SELECT sum(x) / 3 FROM nrbig.u", "SELECT stddev(x) FROM nrbig.t"} {
		got, err := textResult(ctx, lake, q)
		if code := pgCode(err); code != "22003" {
			t.Errorf("%s: %q %v (SQLSTATE %q), want 22003", q, got, err, code)
		}
	}
}

package engine

import (
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

func TestStrftimeFormat(t *testing.T) {
	for pg, want := range map[string]string{
		"YYYY-MM-DD HH24:MI:SS.US":  "%Y-%m-%d %H:%M:%S.%f",
		`HH12:MI AM "at" DDD, 100%`: "%I:%M %p at %j, 100%%",
		"DD.MM.YY":                  "%d.%m.%y",
	} {
		if got, err := strftimeFormat(pg); err != nil || got != want {
			t.Errorf("strftimeFormat(%q) = %q, %v; want %q", pg, got, err, want)
		}
	}
	for _, pg := range []string{"Month DD", "YYYY-Q", "FMDD", "TZ"} {
		if _, err := strftimeFormat(pg); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Errorf("strftimeFormat(%q): %v, want 0A000", pg, err)
		}
	}
}

// Rewritten calls keep the statement's own parameters and nest.
func TestRewritePGFunctions(t *testing.T) {
	r, err := pg_query.Parse(`SELECT to_char(ts + $2, 'YYYY'), length(encode(decode($1, 'hex'), 'hex')), pg_catalog.length('x') FROM t`)
	if err != nil {
		t.Fatal(err)
	}
	stmt := r.Stmts[0].Stmt
	if err := rewritePGFunctions(stmt); err != nil {
		t.Fatal(err)
	}
	got, err := deparseNode(stmt)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT strftime(ts + $2, '%Y'), length(lower(hex(unhex($1))))::int, length('x')::int FROM t`
	if got != want {
		t.Errorf("rewritten:\n got %s\nwant %s", got, want)
	}
}

package engine

import (
	"database/sql"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

func TestQuoteDuckKeywords(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT "at", ts AT TIME ZONE 'UTC' FROM t WHERE "at" >= 'at' AND pivot = 1`: `SELECT "at", ts AT TIME ZONE 'UTC' FROM t WHERE "at" >= 'at' AND "pivot" = 1`,
		`SELECT t.qualify, glob('a', 'b') FROM t AS semi`:                            `SELECT t."qualify", glob('a', 'b') FROM t "semi"`,
		`SELECT "At" FROM t`: `SELECT "At" FROM t`,
	} {
		tree, err := pg_query.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		text, err := pg_query.Deparse(tree)
		if err != nil {
			t.Fatal(err)
		}
		if got := quoteDuckKeywords(text); got != want {
			t.Errorf("%s\n deparsed %s\n got      %s\n want     %s", in, text, got, want)
		}
	}
}

// TestDuckOnlyKeywordsAreAll enumerates the keywords of the DuckDB the
// engine links that cannot stand bare as a column name (its reserved and
// type/function-name keywords) and requires each one PostgreSQL's deparser
// leaves bare (no keyword, or an unreserved one) to be quoted on the way to
// DuckDB — a column named "by" failed to parse.
func TestDuckOnlyKeywordsAreAll(t *testing.T) {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT DISTINCT keyword_name FROM duckdb_keywords() WHERE keyword_category IN ('reserved', 'type_function') ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var kw string
		if err := rows.Scan(&kw); err != nil {
			t.Fatal(err)
		}
		n++
		res, err := pg_query.Scan(kw)
		if err != nil || len(res.Tokens) != 1 {
			t.Fatalf("scan %q: %v", kw, err)
		}
		switch res.Tokens[0].KeywordKind {
		case pg_query.KeywordKind_NO_KEYWORD, pg_query.KeywordKind_UNRESERVED_KEYWORD:
			if !duckOnlyKeywords[kw] {
				t.Errorf("DuckDB keyword %q is bare in PostgreSQL's deparsed SQL but not in duckOnlyKeywords", kw)
			}
		}
	}
	if n < 50 {
		t.Fatalf("duckdb_keywords() listed %d keywords", n)
	}
}

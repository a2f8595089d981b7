package engine

import (
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

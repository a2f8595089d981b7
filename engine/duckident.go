package engine

import (
	"strings"
)

// duckOnlyKeywords are words DuckDB's grammar reserves (or gives a meaning
// where a column name may stand) that PostgreSQL does not reserve. The
// deparser quotes an identifier only where PostgreSQL needs it, so a column
// named "at", "by" or "pivot" reaches DuckDB bare and fails to parse; these
// are quoted again on the way to DuckDB (TestDuckOnlyKeywordsAreAll derives
// the list from the linked DuckDB's keywords and PostgreSQL's).
var duckOnlyKeywords = map[string]bool{
	"anti": true, "asof": true, "at": true, "by": true, "columns": true, "describe": true, "generated": true, "glob": true,
	"lambda": true, "map": true, "pivot": true, "struct": true,
	"pivot_longer": true, "pivot_wider": true, "positional": true, "qualify": true, "semi": true, "show": true,
	"summarize": true, "try_cast": true, "unpack": true, "unpivot": true,
}

// quoteDuckKeywords quotes, in deparsed SQL, identifiers that are DuckDB
// keywords. The deparser writes SQL keywords in upper case and identifiers
// as they are named, so a lower-case token (not a function call) is an
// identifier.
func quoteDuckKeywords(sql string) string {
	var b strings.Builder
	last := 0
	err := scanTokens(sql, func(tok scanToken) bool {
		start, end := tok.start, tok.end
		if start < last || end > len(sql) || !duckOnlyKeywords[sql[start:end]] {
			return true
		}
		if strings.HasPrefix(strings.TrimLeft(sql[end:], " "), "(") {
			return true
		}
		b.WriteString(sql[last:start])
		b.WriteString(`"` + sql[start:end] + `"`)
		last = end
		return true
	})
	if err != nil || last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}

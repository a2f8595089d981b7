package engine

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Interval literals with a field qualifier.
//
// PostgreSQL reads an interval literal under its qualifier: interval '1'
// year is one year (a bare number is a count of the qualifier's last
// field), '1-2'::interval year to month one year two months, and fields
// below the last one are dropped (interval '1 day 3 hours' day is one day).
// pg_query deparses the qualifier as '1'::interval year, which DuckDB reads
// as a plain cast, ignoring the qualifier: one second — a wrong answer, not
// an error (TPC-H's date '1994-01-01' + interval '1' year). So no qualified
// interval reaches DuckDB: the catalog's PostgreSQL, whose interval input is
// the specification, reads each literal once per statement, and the literal
// becomes its months, days and microseconds, the three fields of an
// interval in both systems, which DuckDB reads exactly.
//
// Unqualified interval literals are respelled the same way, read by
// pgwire.ParseInterval (PostgreSQL 15's interval input, under the
// session's IntervalStyle; TestParseIntervalMatchesPostgreSQL compares the
// two) without a catalog round trip: DuckDB's interval input is not
// PostgreSQL's (it refuses ISO 8601 'P1Y2M3DT4H5M6S' and reads '@ 1 day
// ago' or '-1 days +02:00' otherwise or not at all), and a literal written
// to an interval column of a lake table must be stored as PostgreSQL reads
// it. A literal already in the canonical form (canonicalInterval) needs no
// reading.

// canonicalInterval matches the spelling the rewrite gives literals.
var canonicalInterval = regexp.MustCompile(`^-?[0-9]+ months -?[0-9]+ days -?[0-9]+ microseconds$`)

// rewriteIntervalFields replaces every interval cast of a string constant
// in stmt (interval '…', '…'::interval, with or without a field qualifier,
// and the casts the engine gives untyped literals in an interval context)
// by the unqualified interval PostgreSQL reads: qualified ones read by the
// catalog's PostgreSQL, the others by pgwire.ParseInterval. Only constants can be read
// ahead; a qualifier on anything else is 0A000.
func (s *Session) rewriteIntervalFields(ctx context.Context, stmt *pg_query.Node) error {
	var casts, unqualified []*pg_query.Node
	walk(stmt, func(n *pg_query.Node) {
		tc := n.GetTypeCast()
		switch {
		case tc == nil:
		case qualifiedInterval(tc.TypeName):
			casts = append(casts, n)
		case intervalTypeName(tc.TypeName):
			if sv := tc.Arg.GetAConst().GetSval(); sv != nil && !canonicalInterval.MatchString(sv.Sval) {
				unqualified = append(unqualified, n)
			}
		}
	})
	for _, n := range unqualified {
		sv := n.GetTypeCast().Arg.GetAConst().GetSval()
		iv, err := pgwire.ParseInterval(sv.Sval, s.settings["intervalstyle"].value)
		if err != nil {
			return err
		}
		sv.Sval = fmt.Sprintf("%d months %d days %d microseconds", iv.Months, iv.Days, iv.Microseconds)
	}
	var (
		reads []*pg_query.Node
		cols  []string
	)
	for _, n := range casts {
		tc := n.GetTypeCast()
		c := tc.Arg.GetAConst()
		switch {
		case c != nil && c.Isnull:
			tc.TypeName.Typmods = nil // NULL under any qualifier is NULL
			continue
		case c == nil || c.GetSval() == nil:
			return sqlerr.Unsupported("an interval field qualifier on a value that is not a string constant",
				"write the unit in the value ('1 year'::interval, $1::interval) or qualify a constant (interval '1' year)")
		}
		text, err := deparsePGExpr(n)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("(%s)", text)
		cols = append(cols,
			fmt.Sprintf("(extract(year FROM %[1]s) * 12 + extract(month FROM %[1]s))::int8", v),
			fmt.Sprintf("extract(day FROM %s)::int8", v),
			fmt.Sprintf("(extract(hour FROM %[1]s) * 3600000000 + extract(minute FROM %[1]s) * 60000000 + extract(microseconds FROM %[1]s))::int8", v))
		reads = append(reads, n)
	}
	if len(reads) == 0 {
		return nil
	}
	vals := make([]int64, len(cols))
	err := s.withUserTx(ctx, func(tx pgx.Tx) error {
		row := tx.QueryRow(ctx, "SELECT "+strings.Join(cols, ", "))
		dest := make([]any, len(vals))
		for i := range vals {
			dest[i] = &vals[i]
		}
		return row.Scan(dest...)
	})
	if err != nil {
		return err
	}
	for i, n := range reads {
		lit := fmt.Sprintf("%d months %d days %d microseconds", vals[3*i], vals[3*i+1], vals[3*i+2])
		n.Node = &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{
			Arg:      pg_query.MakeAConstStrNode(lit, -1),
			TypeName: &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode("interval")}, Typemod: -1, Location: -1},
			Location: -1,
		}}
	}
	return nil
}

// qualifiedInterval reports whether t is interval with a field qualifier
// or a seconds precision (pg_catalog.interval with type modifiers).
func qualifiedInterval(t *pg_query.TypeName) bool {
	return t != nil && len(t.Typmods) > 0 && intervalTypeName(t)
}

// intervalTypeName reports whether t is interval (not an array of it).
func intervalTypeName(t *pg_query.TypeName) bool {
	if t == nil || len(t.ArrayBounds) > 0 || len(t.Names) == 0 {
		return false
	}
	last := t.Names[len(t.Names)-1].GetString_().GetSval()
	if last != "interval" {
		return false
	}
	return len(t.Names) == 1 || t.Names[0].GetString_().GetSval() == "pg_catalog"
}

package bench

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// An answer is a query's rows as text, one line per row, its values joined
// by '|'. Numbers of every type (integers, numeric, double precision,
// DuckDB's DECIMAL and HUGEINT) are rounded to 2 decimals, halves away from
// zero, from their exact decimal value (a double from its shortest decimal
// form), so a sum computed as numeric on one system and as double on
// another agrees; dates print as YYYY-MM-DD, NULL as NULL.

// tpchAnswer is a query's answer; types are the result columns' type
// names where the system says them in PostgreSQL's terms (over pgwire).
type tpchAnswer struct {
	lines []string
	types []string
}

func pgxTPCHAnswer(ctx context.Context, c *pgx.Conn, q string) (tpchAnswer, error) {
	var a tpchAnswer
	rows, err := c.Query(ctx, q)
	if err != nil {
		return a, err
	}
	defer rows.Close()
	for _, f := range rows.FieldDescriptions() {
		name := fmt.Sprintf("oid %d", f.DataTypeOID)
		if t, ok := c.TypeMap().TypeForOID(f.DataTypeOID); ok {
			name = t.Name
		}
		a.types = append(a.types, f.Name+" "+name)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return a, err
		}
		a.lines = append(a.lines, tpchAnswerRow(vals))
	}
	return a, rows.Err()
}

func sqlTPCHAnswer(ctx context.Context, db *sql.DB, q string) (tpchAnswer, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return tpchAnswer{}, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return tpchAnswer{}, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out []string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return tpchAnswer{}, err
		}
		out = append(out, tpchAnswerRow(vals))
	}
	return tpchAnswer{lines: out}, rows.Err()
}

// tpchAnswerRow renders one row of an answer.
func tpchAnswerRow(vals []any) string {
	var b strings.Builder
	for i, v := range vals {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(tpchAnswerValue(v))
	}
	return b.String()
}

func tpchAnswerValue(v any) string {
	var r *big.Rat
	switch v := v.(type) {
	case nil:
		return "NULL"
	case string:
		return v
	case []byte:
		return string(v)
	case time.Time:
		if v.Hour() == 0 && v.Minute() == 0 && v.Second() == 0 && v.Nanosecond() == 0 {
			return v.Format(time.DateOnly)
		}
		return v.Format(time.RFC3339Nano)
	case int64:
		r = new(big.Rat).SetInt64(v)
	case int32:
		r = new(big.Rat).SetInt64(int64(v))
	case int16:
		r = new(big.Rat).SetInt64(int64(v))
	case int8:
		r = new(big.Rat).SetInt64(int64(v))
	case int:
		r = new(big.Rat).SetInt64(int64(v))
	case uint64:
		r = new(big.Rat).SetUint64(v)
	case uint32:
		r = new(big.Rat).SetUint64(uint64(v))
	case *big.Int:
		r = new(big.Rat).SetInt(v)
	case float64:
		r, _ = new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
	case float32:
		r, _ = new(big.Rat).SetString(strconv.FormatFloat(float64(v), 'g', -1, 32))
	case duckdb.Decimal:
		r = new(big.Rat).SetFrac(v.Value, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v.Scale)), nil))
	case pgtype.Numeric:
		if !v.Valid {
			return "NULL"
		}
		if v.NaN || v.InfinityModifier != pgtype.Finite {
			s, _ := v.Value()
			return fmt.Sprint(s)
		}
		r = new(big.Rat).SetInt(v.Int)
		p := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(v.Exp))), nil))
		if v.Exp >= 0 {
			r.Mul(r, p)
		} else {
			r.Quo(r, p)
		}
	default:
		return fmt.Sprint(v)
	}
	if r == nil { // a float that is NaN or infinite
		return fmt.Sprint(v)
	}
	s := r.FloatString(2)
	if s == "-0.00" {
		s = "0.00"
	}
	return s
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}

// typesDiffer lists the columns whose type differs between two answers
// that both have types ("" when none does or either lacks them).
func typesDiffer(want, got []string) string {
	if len(want) == 0 || len(got) == 0 {
		return ""
	}
	var out []string
	for i := range max(len(want), len(got)) {
		if i >= len(want) || i >= len(got) || want[i] != got[i] {
			w, g := "(none)", "(none)"
			if i < len(want) {
				w = want[i]
			}
			if i < len(got) {
				g = got[i]
			}
			out = append(out, g+" (postgres: "+w+")")
		}
	}
	return strings.Join(out, ", ")
}

// sameTPCHAnswer compares two answers, in order when ordered, else as
// sorted lines, and describes the first difference.
func sameTPCHAnswer(want, got []string, ordered bool) (bool, string) {
	if !ordered {
		want, got = slices.Clone(want), slices.Clone(got)
		slices.Sort(want)
		slices.Sort(got)
	}
	for i := range max(len(want), len(got)) {
		w, g := "(no row)", "(no row)"
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			return false, fmt.Sprintf("%d rows vs %d; row %d: %q vs %q", len(want), len(got), i+1, w, g)
		}
	}
	return true, ""
}

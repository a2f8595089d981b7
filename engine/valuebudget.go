package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"math"
	"runtime"
	"strings"
	"unicode/utf8"

	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Values a statement builds.
//
// DuckDB's memory_limit bounds its operators' buffers, not the strings a
// function returns: those live in the vector of a chunk of up to 2048 rows,
// outside the limit, so SELECT repeat('a', 400000000) || repeat('b',
// 400000000) took the server past 4 GB under a 2 GiB budget. Functions that
// make a value larger than their arguments are therefore computed by the
// engine (budgetFunctions), which sizes each result before it builds it:
// the values one call site puts into the vector of one chunk may take at
// most Engine.valueBudget / (the statement's budgeted call sites) bytes, so
// everything such calls of one statement hold at once on one DuckDB thread
// stays within the value budget (Config.MemoryLimit / 8 per thread). Beyond
// it the statement fails with 54000 "requested length too large",
// PostgreSQL's error for a value beyond its own 1 GB limit.
//
// Which calls (budgetValues): in every statement, those whose result size
// an argument chooses — repeat, lpad, rpad; in a statement that reads no
// relation (nolake.go), also those that concatenate — ||, concat,
// concat_ws, replace — since nesting them doubles a value per level. Over
// relations the concatenating ones stay DuckDB's own (vectorized, many
// times faster than a Go function per row); a statement that doubles lake
// values level by level is bounded only by the memory limit's spill and
// the row size limit (ARCHITECTURE.md, Resource bounds).

// budgetFunc is a PostgreSQL function the engine computes under the value
// budget. size is the exact byte length of the result of args (never NULL
// unless nulls), without building it; build makes it.
type budgetFunc struct {
	args     []duckdb.Type // after the leading budget
	variadic bool          // the last type repeats
	nulls    bool          // sees NULL arguments (concat skips them)
	size     func(args []driver.Value) (int64, bool)
	build    func(args []driver.Value) any
}

// budgetFunctions maps a PostgreSQL function (or "||") to its engine
// implementation, named lakesoul_pg_<name>, whose first argument is the
// call site's budget per chunk.
var budgetFunctions = map[string]budgetFunc{
	"repeat": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT},
		size: func(a []driver.Value) (int64, bool) {
			return mulSize(int64(len(a[0].(string))), max(a[1].(int64), 0))
		},
		build: func(a []driver.Value) any { return strings.Repeat(a[0].(string), int(max(a[1].(int64), 0))) }},
	"lpad": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR},
		size:  func(a []driver.Value) (int64, bool) { return padSize(a) },
		build: func(a []driver.Value) any { return pad(a, true) }},
	"rpad": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_BIGINT, duckdb.TYPE_VARCHAR},
		size:  func(a []driver.Value) (int64, bool) { return padSize(a) },
		build: func(a []driver.Value) any { return pad(a, false) }},
	"||": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR},
		size:  func(a []driver.Value) (int64, bool) { return int64(len(a[0].(string)) + len(a[1].(string))), true },
		build: func(a []driver.Value) any { return a[0].(string) + a[1].(string) }},
	"replace": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR},
		size: func(a []driver.Value) (int64, bool) {
			s, from, to := a[0].(string), a[1].(string), a[2].(string)
			if from == "" {
				return int64(len(s)), true // PostgreSQL returns the string unchanged
			}
			n := int64(strings.Count(s, from))
			if len(to) <= len(from) {
				return int64(len(s)) - n*int64(len(from)-len(to)), true
			}
			grow, ok := mulSize(n, int64(len(to)-len(from)))
			return int64(len(s)) + grow, ok
		},
		build: func(a []driver.Value) any {
			if a[1].(string) == "" {
				return a[0]
			}
			return strings.ReplaceAll(a[0].(string), a[1].(string), a[2].(string))
		}},
	// concat skips NULL arguments; concat_ws is NULL with a NULL separator
	// and skips NULL values.
	"concat": {args: []duckdb.Type{duckdb.TYPE_VARCHAR}, variadic: true, nulls: true,
		size: func(a []driver.Value) (int64, bool) {
			var n int64
			for _, v := range a {
				if s, ok := v.(string); ok {
					n += int64(len(s))
				}
			}
			return n, true
		},
		build: func(a []driver.Value) any {
			var sb strings.Builder
			for _, v := range a {
				if s, ok := v.(string); ok {
					sb.WriteString(s)
				}
			}
			return sb.String()
		}},
	"concat_ws": {args: []duckdb.Type{duckdb.TYPE_VARCHAR, duckdb.TYPE_VARCHAR}, variadic: true, nulls: true,
		size: func(a []driver.Value) (int64, bool) {
			sep, ok := a[0].(string)
			if !ok {
				return 0, true
			}
			var n, k int64
			for _, v := range a[1:] {
				if s, ok := v.(string); ok {
					n += int64(len(s))
					k++
				}
			}
			seps, ok := mulSize(int64(len(sep)), max(k-1, 0))
			return n + seps, ok
		},
		build: func(a []driver.Value) any {
			sep, ok := a[0].(string)
			if !ok {
				return nil
			}
			var parts []string
			for _, v := range a[1:] {
				if s, ok := v.(string); ok {
					parts = append(parts, s)
				}
			}
			return strings.Join(parts, sep)
		}},
}

// budgetFuncName is the DuckDB name of a budgeted function.
func budgetFuncName(name string) string {
	if name == "||" {
		return "lakesoul_pg_textcat"
	}
	return "lakesoul_pg_" + name
}

// mulSize multiplies two sizes; false when the product is beyond any budget.
func mulSize(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	if a != 0 && b > math.MaxInt64/4/a {
		return 0, false
	}
	return a * b, true
}

// padParts is lpad/rpad(s, n, fill) taken apart as PostgreSQL does: n < 0
// is 0, s keeps its first n characters, and the rest up to n characters
// is fill repeated (nothing when fill is empty).
func padParts(a []driver.Value) (s, fill string, padChars int64) {
	s, fill = a[0].(string), a[2].(string)
	n := max(a[1].(int64), 0)
	chars := int64(utf8.RuneCountInString(s))
	if chars > n {
		cut := 0
		for i := int64(0); i < n; i++ {
			_, w := utf8.DecodeRuneInString(s[cut:])
			cut += w
		}
		s, chars = s[:cut], n
	}
	if fill == "" {
		return s, fill, 0
	}
	return s, fill, n - chars
}

// padBytes is the byte length of padChars characters of fill repeated, and
// the length of the partial copy at its end.
func padBytes(fill string, padChars int64) (full int64, rest int, ok bool) {
	fillChars := int64(utf8.RuneCountInString(fill))
	copies := padChars / fillChars
	full, ok = mulSize(copies, int64(len(fill)))
	for i := int64(0); i < padChars%fillChars; i++ {
		_, w := utf8.DecodeRuneInString(fill[rest:])
		rest += w
	}
	return full, rest, ok
}

func padSize(a []driver.Value) (int64, bool) {
	s, fill, padChars := padParts(a)
	if padChars == 0 {
		return int64(len(s)), true
	}
	full, rest, ok := padBytes(fill, padChars)
	return int64(len(s)) + full + int64(rest), ok
}

func pad(a []driver.Value, left bool) any {
	s, fill, padChars := padParts(a)
	if padChars == 0 {
		return s
	}
	full, rest, _ := padBytes(fill, padChars)
	p := strings.Repeat(fill, int(full)/len(fill)) + fill[:rest]
	if left {
		return p + s
	}
	return s + p
}

// valueBudgetError is the error of a call site beyond its budget.
func valueBudgetError(budget int64) error {
	return scanFailures.wrap(&sqlerr.Error{Code: sqlerr.ProgramLimitExceeded, Message: "requested length too large",
		Detail: fmt.Sprintf("The values this expression builds for one batch of rows would take more than %d bytes.", budget),
		Hint:   "Build smaller values, or raise the server's --memory-limit."})
}

func (f budgetFunc) Config() duckdb.ScalarFuncConfig {
	in := []duckdb.TypeInfo{mustTypeInfo(duckdb.TYPE_BIGINT)}
	for _, t := range f.args {
		in = append(in, mustTypeInfo(t))
	}
	cfg := duckdb.ScalarFuncConfig{ResultTypeInfo: mustTypeInfo(duckdb.TYPE_VARCHAR), SpecialNullHandling: f.nulls}
	if f.variadic {
		cfg.VariadicTypeInfo = in[len(in)-1]
		in = in[:len(in)-1]
	}
	cfg.InputTypeInfos = in
	return cfg
}

func mustTypeInfo(t duckdb.Type) duckdb.TypeInfo {
	ti, err := duckdb.NewTypeInfo(t)
	if err != nil {
		panic(err) // a bug in budgetFunctions
	}
	return ti
}

// Executor sizes each row's result before building it and stops the
// chunk once the values it built would pass the call site's budget.
func (f budgetFunc) Executor() duckdb.ScalarFuncExecutor {
	return duckdb.ScalarFuncExecutor{ChunkContextExecutor: func(_ context.Context, chunk *duckdb.ChunkIteratorState) error {
		var used int64
		args := make([]driver.Value, 0, 4)
		for row, err := range chunk.Rows() {
			if err != nil {
				return err
			}
			args = args[:0]
			for i := range row.ColumnCount() {
				args = append(args, *row.GetValuePtr(i))
			}
			budget, _ := args[0].(int64)
			n, ok := f.size(args[1:])
			if used += n; !ok || used > budget {
				return valueBudgetError(budget)
			}
			if err := row.SetResult(f.build(args[1:])); err != nil {
				return err
			}
		}
		return nil
	}}
}

// valueBudgetFor is the value budget of one DuckDB thread for a memory
// limit (0: DuckDB's default, 80% of the RAM) and thread count (0: one per
// CPU).
func valueBudgetFor(memoryLimit int64, threads int) int64 {
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	if memoryLimit <= 0 {
		memoryLimit = 8 << 30
	}
	return max(memoryLimit/8/int64(threads), 8<<20)
}

// budgetValues replaces the calls described in the header by their budgeted
// implementations, each with its share of budget; types are the
// statement's as written (for ||, only text || text is PostgreSQL's
// textcat).
func budgetValues(stmt *pg_query.Node, ti *typeInfo, budget int64) {
	concatenating := readsNoRelation(stmt)
	var sites []*pg_query.Node
	walk(stmt, func(n *pg_query.Node) {
		if n == nil {
			return // an element a rewrite left empty
		}
		switch x := n.Node.(type) {
		case *pg_query.Node_FuncCall:
			fc := x.FuncCall
			if fc.FuncVariadic || fc.AggStar || fc.Over != nil || len(fc.AggOrder) > 0 || fc.AggFilter != nil {
				return
			}
			switch name := funcName(fc); {
			case name == "repeat" && len(fc.Args) == 2, (name == "lpad" || name == "rpad") && (len(fc.Args) == 2 || len(fc.Args) == 3):
				sites = append(sites, n)
			case concatenating && (name == "replace" && len(fc.Args) == 3 || name == "concat" && len(fc.Args) > 0 ||
				name == "concat_ws" && len(fc.Args) > 1):
				sites = append(sites, n)
			}
		case *pg_query.Node_AExpr:
			a := x.AExpr
			if concatenating && a.Kind == pg_query.A_Expr_Kind_AEXPR_OP && operatorName(a) == "||" && a.Lexpr != nil &&
				textOrLiteral(ti.typeAt(a.Lexpr)) && textOrLiteral(ti.typeAt(a.Rexpr)) {
				sites = append(sites, n)
			}
		}
	})
	if len(sites) == 0 {
		return
	}
	share := max(budget/int64(len(sites)), 1)
	for _, n := range sites {
		var name string
		var args []*pg_query.Node
		if a := n.GetAExpr(); a != nil {
			name, args = "||", []*pg_query.Node{a.Lexpr, a.Rexpr}
		} else {
			fc := n.GetFuncCall()
			name, args = funcName(fc), fc.Args
			if (name == "lpad" || name == "rpad") && len(args) == 2 {
				args = append(args, pg_query.MakeAConstStrNode(" ", -1))
			}
		}
		call := makeCall(budgetFuncName(name), append([]*pg_query.Node{pg_query.MakeAConstIntNode(share, -1)}, args...)...)
		n.Node = call.Node
	}
}

// textOrLiteral reports whether t is a text type or an untyped literal.
func textOrLiteral(t pgType) bool { return t.literal || t.isText() }

// readsNoRelation reports whether a bound statement reads no table: no lake
// scan, no temporary table, only its own CTEs.
func readsNoRelation(stmt *pg_query.Node) bool {
	ctes := cteRefs(stmt)
	none := true
	walk(stmt, func(n *pg_query.Node) {
		switch {
		case n.GetRangeVar() != nil && ctes[n.GetRangeVar()] == nil:
			none = false
		case n.GetFuncCall() != nil && funcName(n.GetFuncCall()) == scanFunctionName:
			none = false
		}
	})
	return none
}

package engine

import (
	"math"
	"math/big"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Numeric constants in pruning terms. `l_discount BETWEEN 0.06 - 0.01 AND
// 0.06 + 0.01` and `l_quantity < 24` on DECIMAL columns, and `i < 24.5` on
// integer columns, become row-filter bounds on the columns' unscaled
// integers: PostgreSQL compares numeric values exactly, so a constant
// becomes the exact rational it spells, and a bound between two of the
// column's values is rounded the way that keeps every row the comparison
// keeps (`d < 0.065` on a scale-2 column is `unscaled <= 6`; `d = 0.065`
// holds for no row). Constant arithmetic folds only where PostgreSQL's
// arithmetic is numeric's — exact — rather than an integer type's, which
// can overflow: + - * with a numeric operand, or of integers whose result
// fits an integer. Casts with a type modifier
// (`'0.055'::numeric(15,2)` rounds) are no constants here.
//
// The reader then prunes files and row groups by the columns' statistics
// and drops rows before they reach DuckDB; DuckDB still applies the whole
// WHERE, and a statement with such terms never runs as a direct scan
// (exactFor), so these bounds only ever remove rows no comparison keeps.

// numericText reads PostgreSQL numeric input without special values
// (NaN, Infinity) as the rewriter does (plainNumericText). false for
// anything else.
func numericText(s string) (*big.Rat, bool) {
	plain, ok, err := plainNumericText(s)
	if !ok || err != nil {
		return nil, false
	}
	return new(big.Rat).SetString(plain)
}

// numericLiteral is a numeric-typed constant: a literal with a point or an
// exponent, or an integer literal beyond bigint (PostgreSQL types those as
// numeric). Integer literals within bigint are integers.
func numericLiteral(n *pg_query.Node) (*big.Rat, bool) {
	c := n.GetAConst()
	if c == nil || c.Isnull || c.GetFval() == nil {
		return nil, false
	}
	return numericText(c.GetFval().Fval)
}

// numericOperand is an operand of folded numeric arithmetic, and whether it
// is of type numeric (an integer literal is not).
func numericOperand(n *pg_query.Node) (r *big.Rat, isNumeric, ok bool) {
	if r, ok := numericLiteral(n); ok {
		return r, true, true
	}
	if c := n.GetAConst(); c != nil && !c.Isnull && c.GetIval() != nil {
		return new(big.Rat).SetInt64(int64(c.GetIval().Ival)), false, true
	}
	if e := n.GetAExpr(); e != nil {
		return foldNumeric(e)
	}
	return nil, false, false
}

// foldNumeric folds `a op b` (op + - *) of constants as PostgreSQL
// computes it: exactly when an operand is numeric; integer (int4)
// arithmetic only when its result fits an integer (`1 + 10` of TPC-H Q19),
// since PostgreSQL raises 22003 otherwise. isNumeric is the result's type.
func foldNumeric(e *pg_query.A_Expr) (v *big.Rat, isNumeric, ok bool) {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_() == nil || e.Lexpr == nil || e.Rexpr == nil {
		return nil, false, false
	}
	l, lnum, ok1 := numericOperand(e.Lexpr)
	r, rnum, ok2 := numericOperand(e.Rexpr)
	if !ok1 || !ok2 {
		return nil, false, false
	}
	switch e.Name[0].GetString_().Sval {
	case "+":
		v = new(big.Rat).Add(l, r)
	case "-":
		v = new(big.Rat).Sub(l, r)
	case "*":
		v = new(big.Rat).Mul(l, r)
	default:
		return nil, false, false
	}
	if !lnum && !rnum && (!v.IsInt() || !v.Num().IsInt64() || v.Num().Int64() < math.MinInt32 || v.Num().Int64() > math.MaxInt32) {
		return nil, false, false
	}
	return v, lnum || rnum, true
}

// foldNumericArith reads folded arithmetic of numbers as a numeric argument.
func foldNumericArith(e *pg_query.A_Expr) (pruneArg, bool) {
	r, _, ok := foldNumeric(e)
	if !ok {
		return pruneArg{}, false
	}
	return pruneArg{kind: termNumeric, text: r.RatString()}, true
}

// ratOf reads the text of a termNumeric argument (a numeric literal or
// RatString's "a/b").
func ratOf(text string) (*big.Rat, bool) {
	if r, ok := numericText(text); ok {
		return r, true
	}
	return new(big.Rat).SetString(text)
}

// scaledTerm turns `col op r`, for a column whose values are int64 at scale
// (integers: 0; DECIMAL: its scale), into a term on those integers that
// keeps exactly the rows the comparison keeps. ok is false when the term
// cannot be put so (<> a value the column cannot hold: it holds for every
// non-NULL row). For opEq, v is nil when no value of the column equals r.
func scaledTerm(op pruneOp, r *big.Rat, scale int32) (pruneOp, any, bool) {
	x := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	// floor and ceil of x; exact when x is an integer.
	num, den := x.Num(), x.Denom()
	floor := new(big.Int).Div(num, den) // Euclidean: rounds toward -inf for den > 0
	exact := new(big.Int).Mod(num, den).Sign() == 0
	ceil := new(big.Int).Set(floor)
	if !exact {
		ceil.Add(ceil, big.NewInt(1))
	}
	clamp := func(b *big.Int) int64 {
		switch {
		case b.IsInt64():
			return b.Int64()
		case b.Sign() > 0:
			return math.MaxInt64
		}
		return math.MinInt64
	}
	switch op {
	case opEq:
		if !exact || !floor.IsInt64() {
			return opEq, nil, true
		}
		return opEq, floor.Int64(), true
	case opNe:
		if !exact || !floor.IsInt64() {
			return opNe, nil, false
		}
		return opNe, floor.Int64(), true
	case opLt: // v < x  ⇔  v < ceil(x)
		if !ceil.IsInt64() && ceil.Sign() > 0 {
			return opLe, int64(math.MaxInt64), true
		}
		return opLt, clamp(ceil), true
	case opLe: // v <= x  ⇔  v <= floor(x)
		if !floor.IsInt64() && floor.Sign() < 0 {
			return opLt, int64(math.MinInt64), true
		}
		return opLe, clamp(floor), true
	case opGt: // v > x  ⇔  v > floor(x)
		if !floor.IsInt64() && floor.Sign() < 0 {
			return opGe, int64(math.MinInt64), true
		}
		return opGt, clamp(floor), true
	case opGe: // v >= x  ⇔  v >= ceil(x)
		if !ceil.IsInt64() && ceil.Sign() > 0 {
			return opGt, int64(math.MaxInt64), true
		}
		return opGe, clamp(ceil), true
	}
	return op, nil, false
}

package engine

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// PostgreSQL's format(formatstr, args…): %s (the argument's text, NULL as
// nothing), %I (quote_ident; NULL fails with 22004), %L (quote_literal; NULL
// as NULL), %% (a percent sign), with an optional argument position n$, the
// flag - (left-justify) and a width (digits, * for the next argument, or
// *n$). DuckDB's format is another function, so a call with a constant
// format string becomes DuckDB's printf over each argument's PostgreSQL
// text (pgText): printf pads as PostgreSQL does and never truncates.

// formatSpec is one conversion of a format string.
type formatSpec struct {
	arg      int // index into the call's value arguments
	widthArg int // index of the width argument, or -1
	width    int
	left     bool
	kind     byte // 's', 'I' or 'L'
}

// parseFormat splits a format string into literal text and conversions;
// the conversions refer to the nargs arguments after the format string.
func parseFormat(f string, nargs int) (lits []string, specs []formatSpec, err error) {
	next := 0
	var lit strings.Builder
	take := func(pos int) (int, error) {
		if pos > 0 {
			next = pos - 1
		}
		if next >= nargs {
			return 0, sqlerr.New(sqlerr.InvalidParameterValue, "too few arguments for format()")
		}
		next++
		return next - 1, nil
	}
	// number reads digits at f[i:]; n < 0 when there are none.
	number := func(i int) (n, end int) {
		end = i
		for end < len(f) && f[end] >= '0' && f[end] <= '9' {
			end++
		}
		if end == i {
			return -1, i
		}
		v, err := strconv.Atoi(f[i:end])
		if err != nil || v > 1<<30 {
			return -2, end
		}
		return v, end
	}
	// position reads "n$" at f[i:]: 0 when absent.
	position := func(i int) (pos, end int, err error) {
		n, j := number(i)
		if n < 0 || j >= len(f) || f[j] != '$' {
			return 0, i, nil
		}
		if n == 0 {
			return 0, i, sqlerr.New(sqlerr.InvalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
		}
		return n, j + 1, nil
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			lit.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "unterminated format() type specifier")
		}
		if f[i] == '%' {
			lit.WriteByte('%')
			continue
		}
		sp := formatSpec{widthArg: -1}
		pos, j, err := position(i)
		if err != nil {
			return nil, nil, err
		}
		for ; j < len(f) && f[j] == '-'; j++ {
			sp.left = true
		}
		if j < len(f) && f[j] == '*' {
			wpos, k, err := position(j + 1)
			if err != nil {
				return nil, nil, err
			}
			if sp.widthArg, err = take(wpos); err != nil {
				return nil, nil, err
			}
			j = k
		} else if n, k := number(j); n >= 0 {
			sp.width, j = n, k
		} else if n == -2 {
			return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "number is out of range")
		}
		if j >= len(f) {
			return nil, nil, sqlerr.New(sqlerr.InvalidParameterValue, "unterminated format() type specifier")
		}
		switch f[j] {
		case 's', 'I', 'L':
			sp.kind = f[j]
		default:
			return nil, nil, &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
				Message: "unrecognized format() type specifier \"" + string(f[j]) + "\"",
				Hint:    `For a single "%" use "%%".`}
		}
		if sp.arg, err = take(pos); err != nil {
			return nil, nil, err
		}
		lits = append(lits, lit.String())
		lit.Reset()
		specs = append(specs, sp)
		i = j
	}
	return append(lits, lit.String()), specs, nil
}

// format rewrites format() with a constant format string.
func (rw *pgRewriter) format(n *pg_query.Node, fc *pg_query.FuncCall) error {
	if len(fc.Args) == 0 {
		return nil // DuckDB reports the missing argument
	}
	if c := fc.Args[0].GetAConst(); c != nil && c.Isnull {
		n.Node = makeCast(&pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true}}}, "text").Node
		return nil
	}
	f, ok := stringValue(fc.Args[0])
	if !ok {
		return sqlerr.Unsupported("format() with a format string that is not a constant", "format('… %s …', args)")
	}
	args := fc.Args[1:]
	lits, specs, err := parseFormat(f, len(args))
	if err != nil {
		return err
	}
	var pf strings.Builder
	var pargs []*pg_query.Node
	for i, sp := range specs {
		pf.WriteString(strings.ReplaceAll(lits[i], "%", "%%"))
		pf.WriteByte('%')
		if sp.left {
			pf.WriteByte('-')
		}
		if sp.widthArg >= 0 {
			pf.WriteByte('*')
			pargs = append(pargs, coalesce(makeCast(args[sp.widthArg], "int4"), pg_query.MakeAConstIntNode(0, -1)))
		} else if sp.width > 0 {
			pf.WriteString(strconv.Itoa(sp.width))
		}
		pf.WriteByte('s')
		arg := args[sp.arg]
		text := rw.pgText(arg)
		switch sp.kind {
		case 's':
			text = coalesce(text, pg_query.MakeAConstStrNode("", -1))
		case 'I':
			text = makeCall("lakesoul_quote_ident", text)
		case 'L':
			text = coalesce(makeCall("lakesoul_quote_literal", text), pg_query.MakeAConstStrNode("NULL", -1))
		}
		pargs = append(pargs, text)
	}
	pf.WriteString(strings.ReplaceAll(lits[len(lits)-1], "%", "%%"))
	n.Node = makeCall("printf", append([]*pg_query.Node{pg_query.MakeAConstStrNode(pf.String(), -1)}, pargs...)...).Node
	return nil
}

// pgText is an expression of n's text as PostgreSQL's output function
// writes it, for the types whose DuckDB text differs (floats, booleans,
// jsonb, bytea); other values are cast to text.
func (rw *pgRewriter) pgText(n *pg_query.Node) *pg_query.Node {
	switch t := rw.ti.typeAt(n); {
	case t.literal || t.isText():
		return n
	case t.oid == schema.OIDFloat8:
		return makeCall("lakesoul_float8_text", n)
	case t.oid == schema.OIDFloat4:
		return makeCall("lakesoul_float4_text", n)
	case t.oid == schema.OIDBool:
		c := pg_query.MakeCaseExprNode(nil, []*pg_query.Node{
			pg_query.MakeCaseWhenNode(n, pg_query.MakeAConstStrNode("t", -1), -1),
			pg_query.MakeCaseWhenNode(pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{n}, -1),
				pg_query.MakeAConstStrNode("f", -1), -1)}, -1)
		return c
	case t.oid == schema.OIDJSONB:
		return makeCall("lakesoul_jsonb_canonical", makeCast(n, "text"))
	case t.oid == schema.OIDBytea:
		return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode("||")},
			pg_query.MakeAConstStrNode(`\x`, -1), makeCall("lower", makeCall("hex", n)), -1)
	}
	return makeCast(n, "text")
}

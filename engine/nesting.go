package engine

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Statement nesting limits.
//
// pg_query's parser is C. Its grammar builds the parse tree without
// recursion, but turning the tree into protobuf, protobuf-c's packing and
// unpacking and the deparser all recurse once per tree level on the stack of
// the calling OS thread (cgo calls run there: 2–8 MiB), and overflowing it
// is a SIGSEGV that takes the whole server down. `SELECT 1+1+…` with 40 000
// terms did, in the protobuf packing of the parse result. So user text is
// parsed by parseSQL only, which bounds the depth twice:
//
//   - before parsing, nestingEstimate bounds the depth of the tree the text
//     can produce, from the lexer's tokens (the lexer does not recurse), so
//     the C side only ever converts trees a few thousand levels deep;
//   - the Go side then unmarshals with a recursion limit of maxTreeDepth
//     message levels, the exact bound every later deparse and tree walk
//     relies on: at that depth the deparser's C recursion needs about
//     1.5 MiB of stack.
//
// Both failures are PostgreSQL's 54001 "stack depth limit exceeded". DuckDB
// refuses expressions deeper than its max_expression_depth (1000) on its
// own, and the catalog PostgreSQL checks its max_stack_depth.
const (
	// maxNestingEstimate bounds nestingEstimate. An estimate unit is one
	// nesting token (an operator, a keyword, half a bracket level), which
	// yields at most a few parse-tree levels.
	maxNestingEstimate = 1000
	// maxTreeDepth bounds the parse tree, in protobuf message levels (an
	// expression level is about two).
	maxTreeDepth = 2000
	// bracketWeight is what a bracket level (parentheses, square brackets,
	// CASE … END) adds to the estimate.
	bracketWeight = 2
)

// errTooDeep is the error for a statement nested beyond the limits; cause
// may be nil.
func errTooDeep(cause error) error {
	return &sqlerr.Error{Code: sqlerr.StatementTooComplex, Message: "stack depth limit exceeded",
		Hint: "The statement nests expressions, subqueries or brackets too deeply; simplify it.", Err: cause}
}

// parseSQL parses statement text that a client supplied, within the nesting
// limits. A syntax error is returned as pg_query reports it (see parseError).
func parseSQL(text string) (*pg_query.ParseResult, error) {
	if err := checkNesting(text); err != nil {
		return nil, err
	}
	b, err := pgparser.ParseToProtobuf(text)
	if err != nil {
		return nil, err
	}
	tree := &pg_query.ParseResult{}
	if err := (proto.UnmarshalOptions{RecursionLimit: maxTreeDepth}).Unmarshal(b, tree); err != nil {
		// The bytes are libpg_query's own encoding of a tree it built:
		// the one way they fail to decode is the recursion limit.
		return nil, errTooDeep(err)
	}
	if mayNestSubqueries(text) && subqueryCost(tree.ProtoReflect()) > maxSubqueryCost {
		return nil, &sqlerr.Error{Code: sqlerr.StatementTooComplex, Message: "statement too complex: its subqueries nest too deeply",
			Hint: fmt.Sprintf("Nest scalar, EXISTS and IN subqueries at most %d deep (fewer where they branch), or use joins or WITH.", maxSubqueryChain)}
	}
	return tree, nil
}

// Subquery nesting. DuckDB plans nested subqueries (SubLinks: scalar,
// EXISTS, IN, ANY/ALL) in time that doubles with every level — 20 nested
// scalar subqueries take half a second, 30 an hour — and checks for
// interruption only between phases, so neither statement_timeout nor a
// cancel stops such a statement. subqueryCost models that work, and
// statements beyond maxSubqueryCost are refused with 54001 before planning.
const (
	// maxSubqueryChain is the deepest chain of nested subqueries allowed;
	// maxSubqueryCost is its cost (a few hundred milliseconds of DuckDB
	// planning at worst).
	maxSubqueryChain = 16
	maxSubqueryCost  = 1<<(maxSubqueryChain+1) - 2
)

// subqueryCost sums 2^d over the SubLinks of a tree, d being the number of
// SubLinks enclosing it, itself included. It walks with its own stack.
func subqueryCost(m protoreflect.Message) uint64 {
	type item struct {
		m     protoreflect.Message
		depth int
	}
	var cost uint64
	stack := []item{{m, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		d := it.depth
		if _, ok := it.m.Interface().(*pg_query.SubLink); ok {
			d++
			if d > maxSubqueryChain {
				return maxSubqueryCost + 1
			}
			cost += 1 << d
			if cost > maxSubqueryCost {
				return cost
			}
		}
		it.m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Message() == nil, fd.IsMap():
			case fd.IsList():
				for i, l := 0, v.List(); i < l.Len(); i++ {
					stack = append(stack, item{l.Get(i).Message(), d})
				}
			default:
				stack = append(stack, item{v.Message(), d})
			}
			return true
		})
	}
	return cost
}

// mayNestSubqueries reports whether text could hold subqueries costing more
// than maxSubqueryCost, so that the walk is skipped for nearly all
// statements. Every subquery holds a SELECT, VALUES or TABLE keyword of its
// own, and k subqueries cost at most 2^(k+1)-2, reached by a chain.
func mayNestSubqueries(text string) bool {
	n := 0
	for i := 0; i+5 <= len(text); i++ {
		switch text[i] | 0x20 { // ASCII lower case
		case 's':
			if i+6 <= len(text) && strings.EqualFold(text[i:i+6], "select") {
				n++
			}
		case 'v':
			if i+6 <= len(text) && strings.EqualFold(text[i:i+6], "values") {
				n++
			}
		case 't':
			if strings.EqualFold(text[i:i+5], "table") {
				n++
			}
		}
		if n > maxSubqueryChain {
			return true
		}
	}
	return false
}

// checkNesting fails with 54001 when nestingEstimate exceeds its limit. Text
// too short to reach the limit is not scanned: each unit of the estimate
// needs at least half a byte of text.
func checkNesting(text string) error {
	if len(text)*bracketWeight <= maxNestingEstimate {
		return nil
	}
	est, err := nestingEstimate(text, maxNestingEstimate)
	if err != nil {
		// A lexer error: the parser reports it, before building a tree.
		return nil
	}
	if est > maxNestingEstimate {
		return errTooDeep(nil)
	}
	return nil
}

// nestLevel is the state of one bracket level during nestingEstimate.
type nestLevel struct {
	// closer ends the level: ')' , ']' or END for CASE.
	closer pg_query.Token
	// sticky counts the tokens whose nodes span separators at this level:
	// set operations (a UNION chain's later branches hold comma lists)
	// and joins (an ON condition holds AND/OR).
	sticky int
	// ops counts the other nesting tokens of the current segment (the
	// text since the last separator).
	ops int
	// child is the deepest bracket level closed in the current segment.
	child int
	// max is the deepest segment of the level so far.
	max int
}

func (l *nestLevel) segment() int { return l.sticky + l.ops + l.child }

// endSegment closes the current segment at a separator.
func (l *nestLevel) endSegment() {
	l.max = max(l.max, l.segment())
	l.ops, l.child = 0, 0
}

func (l *nestLevel) value() int { return max(l.max, l.segment()) }

// nestingEstimate returns an upper bound, up to a constant factor, on the
// depth of the parse tree of any statement in text, computed from the
// lexer's tokens with an explicit stack (no recursion, whatever the text).
// It stops early, returning a value above limit, once the bound exceeds it.
//
// The bound follows from how PostgreSQL's grammar nests: a bracket pair
// (parentheses, square brackets, CASE … END) nests its contents one level
// deeper; within a level, every operator or keyword token may add a level
// over its operands, while identifiers and constants are leaves. A
// separator — a comma, AND, OR (the grammar flattens AND and OR chains into
// one node), WHEN/THEN/ELSE inside CASE, a semicolon inside brackets —
// starts a sibling of what precedes it, so the depth of a level is the
// deepest segment between separators, not their sum; long IN lists, VALUES
// rows, AND chains and CASE branch lists stay shallow. The only nodes whose
// operands reach past a separator at their own level are set operations
// (UNION, INTERSECT, EXCEPT) and joins, whose tokens are never reset. A
// clause keyword before a list (SELECT, FROM, …) is reset with the list's
// first item; there is a bounded number of those, absorbed by the margin
// between the estimate and the exact maxTreeDepth.
func nestingEstimate(text string, limit int) (int, error) {
	stack := []nestLevel{{}}
	total := 0
	over := false
	closeLevel := func() {
		v := stack[len(stack)-1].value() + bracketWeight
		stack = stack[:len(stack)-1]
		top := &stack[len(stack)-1]
		top.child = max(top.child, v)
	}
	endStatement := func() {
		for len(stack) > 1 {
			closeLevel()
		}
		total = max(total, stack[0].value())
		stack[0] = nestLevel{}
	}
	err := scanTokens(text, func(t scanToken) bool {
		top := &stack[len(stack)-1]
		switch t.tok {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT,
			pg_query.Token_IDENT, pg_query.Token_UIDENT, pg_query.Token_SCONST, pg_query.Token_USCONST,
			pg_query.Token_BCONST, pg_query.Token_XCONST, pg_query.Token_ICONST, pg_query.Token_FCONST,
			pg_query.Token_PARAM, pg_query.Token_ASCII_46: // "." between the names of a qualified name
			// leaves
		case pg_query.Token_ASCII_40, pg_query.Token_ASCII_91, pg_query.Token_CASE:
			closer := pg_query.Token_ASCII_41
			switch t.tok {
			case pg_query.Token_ASCII_91:
				closer = pg_query.Token_ASCII_93
			case pg_query.Token_CASE:
				closer = pg_query.Token_END_P
			}
			stack = append(stack, nestLevel{closer: closer})
		case pg_query.Token_ASCII_41, pg_query.Token_ASCII_93:
			// A closer that does not match the innermost level is a
			// syntax error the parser will report; it closes nothing.
			if len(stack) > 1 && top.closer == t.tok {
				closeLevel()
			}
		case pg_query.Token_END_P:
			if len(stack) > 1 && top.closer == t.tok {
				closeLevel()
			} else {
				top.ops++ // END of a transaction or a BEGIN ATOMIC body
			}
		case pg_query.Token_ASCII_44, pg_query.Token_AND, pg_query.Token_OR:
			top.endSegment()
		case pg_query.Token_WHEN, pg_query.Token_THEN, pg_query.Token_ELSE:
			if top.closer == pg_query.Token_END_P {
				top.endSegment()
			} else {
				top.ops++ // MERGE's and CREATE TRIGGER's WHEN
			}
		case pg_query.Token_ASCII_59:
			if len(stack) > 1 {
				top.endSegment() // statements of CREATE RULE … DO (…; …)
			} else {
				endStatement()
			}
		case pg_query.Token_UNION, pg_query.Token_INTERSECT, pg_query.Token_EXCEPT, pg_query.Token_JOIN:
			top.sticky++
		default:
			top.ops++
		}
		// The open levels alone already nest this deep: stop before the
		// stack grows with the text.
		if (len(stack)-1)*bracketWeight > limit {
			over = true
			return false
		}
		return true
	})
	if err != nil {
		return 0, err
	}
	if over {
		return limit + 1, nil
	}
	endStatement()
	return total, nil
}

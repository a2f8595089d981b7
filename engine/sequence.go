package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/duckdb/duckdb-go/v2"
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Sequences: CREATE/DROP SEQUENCE, nextval/currval/setval/lastval, and the
// sequences behind SERIAL and GENERATED AS IDENTITY columns.
//
// A sequence is a PostgreSQL sequence of the catalog (catalog/sequence.go);
// nextval and setval run there as the session's role, one call per value, so
// values are never handed out twice, whichever server asks. In a statement,
// nextval('s.q') (wherever it appears: VALUES, SELECT, a column default) is
// rewritten to a DuckDB function of the engine bound to this session by its
// random token, volatile, so DuckDB calls it once per row. currval and lastval
// are the session's own memory, as in PostgreSQL.

// sequenceSessions finds a session by token for the DuckDB functions.
var sequenceSessions sync.Map // token → *Session

// seqState is a session's sequence memory.
type seqState struct {
	mu   sync.Mutex // DuckDB may call the functions from several threads
	last map[string]int64
	// lastName is the sequence nextval advanced last (lastval).
	lastName string
}

// seqFunctions are the DuckDB functions standing for PostgreSQL's.
var seqFunctions = map[string]string{
	"nextval": "lakesoul_nextval",
	"currval": "lakesoul_currval",
	"setval":  "lakesoul_setval",
	"lastval": "lakesoul_lastval",
}

func init() {
	v := duckdb.TYPE_VARCHAR
	vol := func(f duckScalar) duckScalar { f.volatile = true; return f }
	duckFunctions["lakesoul_nextval"] = vol(duckScalar{args: []duckdb.Type{v, v, v}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: func(a []driver.Value) (any, error) {
			return seqCall(a[0], func(s *Session) (int64, error) { return s.nextval(a[1].(string), a[2].(string)) })
		}})
	duckFunctions["lakesoul_currval"] = vol(duckScalar{args: []duckdb.Type{v, v, v}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: func(a []driver.Value) (any, error) {
			return seqCall(a[0], func(s *Session) (int64, error) { return s.currval(a[1].(string), a[2].(string)) })
		}})
	duckFunctions["lakesoul_lastval"] = vol(duckScalar{args: []duckdb.Type{v}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: func(a []driver.Value) (any, error) {
			return seqCall(a[0], func(s *Session) (int64, error) { return s.lastval() })
		}})
	// The _named forms take the sequence's name as regclass text, resolved
	// when they run (rewriteSequenceCalls).
	named := func(fn func(s *Session, ns, name string, rest []driver.Value) (int64, error)) func(a []driver.Value) (any, error) {
		return func(a []driver.Value) (any, error) {
			return seqCall(a[0], func(s *Session) (int64, error) {
				ns, name, err := s.sequenceName(a[1].(string))
				if err != nil {
					return 0, err
				}
				return fn(s, ns, name, a[2:])
			})
		}
	}
	duckFunctions["lakesoul_nextval_named"] = vol(duckScalar{args: []duckdb.Type{v, v}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: named(func(s *Session, ns, name string, _ []driver.Value) (int64, error) { return s.nextval(ns, name) })})
	duckFunctions["lakesoul_currval_named"] = vol(duckScalar{args: []duckdb.Type{v, v}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: named(func(s *Session, ns, name string, _ []driver.Value) (int64, error) { return s.currval(ns, name) })})
	duckFunctions["lakesoul_setval_named"] = vol(duckScalar{args: []duckdb.Type{v, v, duckdb.TYPE_BIGINT, duckdb.TYPE_BOOLEAN}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: named(func(s *Session, ns, name string, rest []driver.Value) (int64, error) {
			return s.setval(ns, name, rest[0].(int64), rest[1].(bool))
		})})
	duckFunctions["lakesoul_setval"] = vol(duckScalar{args: []duckdb.Type{v, v, v, duckdb.TYPE_BIGINT, duckdb.TYPE_BOOLEAN}, list: -1, result: duckdb.TYPE_BIGINT,
		fn: func(a []driver.Value) (any, error) {
			return seqCall(a[0], func(s *Session) (int64, error) {
				return s.setval(a[1].(string), a[2].(string), a[3].(int64), a[4].(bool))
			})
		}})
}

// seqCall runs fn for the session of token; its errors keep their SQLSTATE
// through DuckDB.
func seqCall(token driver.Value, fn func(*Session) (int64, error)) (any, error) {
	v, ok := sequenceSessions.Load(token)
	if !ok {
		return nil, fmt.Errorf("sequence functions are not available to this statement")
	}
	n, err := fn(v.(*Session))
	if err != nil {
		return nil, scanFailures.wrap(err)
	}
	return n, nil
}

func (s *Session) nextval(ns, name string) (int64, error) {
	s.seq.mu.Lock()
	defer s.seq.mu.Unlock()
	v, err := s.cat.NextVal(context.Background(), ns, name)
	if err != nil {
		return 0, err
	}
	if s.seq.last == nil {
		s.seq.last = map[string]int64{}
	}
	key := ns + "." + name
	s.seq.last[key], s.seq.lastName = v, key
	return v, nil
}

func (s *Session) currval(ns, name string) (int64, error) {
	s.seq.mu.Lock()
	defer s.seq.mu.Unlock()
	v, ok := s.seq.last[ns+"."+name]
	if !ok {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "currval of sequence %q is not yet defined in this session", name)
	}
	return v, nil
}

func (s *Session) lastval() (int64, error) {
	s.seq.mu.Lock()
	defer s.seq.mu.Unlock()
	if s.seq.lastName == "" {
		return 0, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "lastval is not yet defined in this session")
	}
	return s.seq.last[s.seq.lastName], nil
}

func (s *Session) setval(ns, name string, v int64, isCalled bool) (int64, error) {
	s.seq.mu.Lock()
	defer s.seq.mu.Unlock()
	return s.cat.SetVal(context.Background(), ns, name, v, isCalled)
}

// rewriteSequenceCalls replaces nextval/currval/setval/lastval calls by the
// engine's DuckDB functions for this session; the sequence name must be a
// constant (resolved now, against search_path). Calls of the engine's
// functions written by the user are refused.
func (s *Session) rewriteSequenceCalls(stmt *pg_query.Node) error {
	var err error
	walk(stmt, func(n *pg_query.Node) {
		fc := n.GetFuncCall()
		if fc == nil || err != nil {
			return
		}
		name := funcName(fc)
		if strings.HasPrefix(name, "lakesoul_") && (strings.HasSuffix(name, "val") || strings.HasSuffix(name, "val_named")) {
			err = sqlerr.New(sqlerr.UndefinedFunction, "function %s does not exist", name)
			return
		}
		duck, ok := seqFunctions[name]
		if !ok {
			return
		}
		args := []*pg_query.Node{pg_query.MakeAConstStrNode(s.token, -1)}
		rest := fc.Args
		if name != "lastval" {
			if len(fc.Args) == 0 {
				err = sqlerr.New(sqlerr.UndefinedFunction, "function %s() does not exist", name)
				return
			}
			text, isConst := stringValue(sequenceArg(fc.Args[0]))
			if isConst {
				var ns, seq string
				if ns, seq, err = s.sequenceName(text); err != nil {
					return
				}
				args = append(args, pg_query.MakeAConstStrNode(ns, -1), pg_query.MakeAConstStrNode(seq, -1))
			} else {
				// A name known only when the statement runs ($1, an
				// expression: PHP's lastInsertId('seq')): the _named
				// function resolves it then, as regclass text.
				duck += "_named"
				args = append(args, makeCast(sequenceArg(fc.Args[0]), "text"))
			}
			rest = fc.Args[1:]
		}
		if name == "setval" {
			if len(rest) == 0 || len(rest) > 2 {
				err = sqlerr.New(sqlerr.UndefinedFunction, "function setval needs a value")
				return
			}
			called := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Boolval{Boolval: &pg_query.Boolean{Boolval: true}}}}}
			if len(rest) == 2 {
				called = rest[1]
			}
			rest = []*pg_query.Node{makeCast(rest[0], "bigint"), makeCast(called, "boolean")}
		}
		if len(rest) > 0 && name != "setval" {
			err = sqlerr.New(sqlerr.UndefinedFunction, "function %s with %d arguments does not exist", name, len(fc.Args))
			return
		}
		fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(duck)}
		fc.Args = append(args, rest...)
	})
	return err
}

// sequenceArg is a sequence function's name argument without the casts
// PostgreSQL's own spelling adds ('s.q'::regclass, as pg_dump and
// pg_get_expr write nextval defaults; ::text).
func sequenceArg(n *pg_query.Node) *pg_query.Node {
	for tc := n.GetTypeCast(); tc != nil; tc = n.GetTypeCast() {
		switch typeNameString(tc.TypeName) {
		case "regclass", "text", "varchar":
			n = tc.Arg
		default:
			return n
		}
	}
	return n
}

// callsSequenceFunctions reports whether stmt calls nextval, currval, setval
// or lastval (lake sequences: a query of no table runs in DuckDB then).
func callsSequenceFunctions(stmt *pg_query.Node) bool {
	found := false
	walk(stmt, func(n *pg_query.Node) {
		if fc := n.GetFuncCall(); fc != nil && seqFunctions[funcName(fc)] != "" {
			found = true
		}
	})
	return found
}

// sequenceName splits a sequence name as regclass text reads it ("s.q",
// "q", quoted parts) and qualifies it with the session's first schema;
// "public" is the default namespace (seqNamespace), so currval finds what
// nextval('public.q') remembered.
func (s *Session) sequenceName(text string) (ns, name string, err error) {
	parts, err := splitQualifiedName(text)
	if err != nil || len(parts) == 0 || len(parts) > 2 {
		return "", "", sqlerr.New(sqlerr.InvalidName, "invalid name syntax: %q", text)
	}
	if len(parts) == 1 {
		return seqNamespace(s.searchPath()[0]), parts[0], nil
	}
	return seqNamespace(parts[0]), parts[1], nil
}

// splitQualifiedName splits a dotted name, folding unquoted parts to lower
// case and unquoting quoted ones, as PostgreSQL reads regclass text.
func splitQualifiedName(text string) ([]string, error) {
	var parts []string
	for len(text) > 0 {
		var part string
		if text[0] == '"' {
			end := 1
			var b strings.Builder
			for {
				i := strings.IndexByte(text[end:], '"')
				if i < 0 {
					return nil, fmt.Errorf("unterminated quoted name")
				}
				b.WriteString(text[end : end+i])
				end += i + 1
				if end < len(text) && text[end] == '"' {
					b.WriteByte('"')
					end++
					continue
				}
				break
			}
			part, text = b.String(), text[end:]
		} else {
			i := strings.IndexByte(text, '.')
			if i < 0 {
				i = len(text)
			}
			part, text = strings.ToLower(strings.TrimSpace(text[:i])), text[i:]
		}
		if part == "" {
			return nil, fmt.Errorf("empty name")
		}
		parts = append(parts, part)
		if len(text) > 0 {
			if text[0] != '.' {
				return nil, fmt.Errorf("bad name")
			}
			text = text[1:]
			if text == "" {
				return nil, fmt.Errorf("empty name")
			}
		}
	}
	return parts, nil
}

// planCreateSequence plans CREATE SEQUENCE [IF NOT EXISTS] name [options].
func (s *Session) planCreateSequence(n *pg_query.CreateSeqStmt) (pgwire.Statement, error) {
	if n.Sequence.Relpersistence == "t" {
		return nil, sqlerr.Unsupported("temporary sequences", "CREATE SEQUENCE")
	}
	ns := pgcatalog.Namespace(n.Sequence.Schemaname)
	if ns == "" {
		ns = s.searchPath()[0]
	}
	opts, err := sequenceOptions(n.Options)
	if err != nil {
		return nil, err
	}
	name := n.Sequence.Relname
	return s.ddl("CREATE SEQUENCE", func(ctx context.Context) error {
		err := s.cat.CreateSequence(ctx, ns, name, opts)
		if err != nil && n.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateTable {
			return nil
		}
		return err
	}), nil
}

// sequenceOptions reads CREATE SEQUENCE's (and IDENTITY's) options.
func sequenceOptions(defs []*pg_query.Node) (catalog.SequenceOptions, error) {
	var o catalog.SequenceOptions
	for _, d := range defs {
		de := d.GetDefElem()
		num := func() (*int64, error) {
			v, ok := stringValue(de.Arg)
			if i := de.Arg.GetInteger(); i != nil {
				v, ok = strconv.Itoa(int(i.Ival)), true
			} else if f := de.Arg.GetFloat(); f != nil {
				v, ok = f.Fval, true // beyond int32
			}
			if !ok {
				return nil, nil
			}
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "sequence option %s: %q is not a bigint", de.Defname, v)
			}
			return &x, nil
		}
		var err error
		switch de.Defname {
		case "start":
			o.Start, err = num()
		case "increment":
			o.Increment, err = num()
		case "minvalue":
			o.Min, err = num()
		case "maxvalue":
			o.Max, err = num()
		case "cycle":
			o.Cycle = de.Arg == nil || de.Arg.GetBoolean().GetBoolval() || de.Arg.GetInteger().GetIval() == 1
		case "cache", "as", "owned_by", "restart":
			// cache: every value is asked of the catalog; as: values are
			// bigint; owned_by: SERIAL columns own theirs already.
		default:
			return o, sqlerr.Unsupported("sequence option "+de.Defname, "START, INCREMENT, MINVALUE, MAXVALUE, CYCLE")
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// dropNamed drops the named objects of a kind (sequence, view) with drop,
// which reports false for a name the role sees nothing of.
func (s *Session) dropNamed(ctx context.Context, kind string, names [][]string, missingOK bool,
	drop func(ctx context.Context, ns, name string) (bool, error)) error {
	for _, parts := range names {
		ns, name, err := splitRelationName(parts)
		if err != nil {
			return err
		}
		if ns == "" {
			ns = s.searchPath()[0]
		}
		ok, err := drop(ctx, ns, name)
		if err != nil {
			return err
		}
		if !ok && !missingOK {
			return sqlerr.New(sqlerr.UndefinedTable, "%s %q does not exist", kind, name)
		}
	}
	return nil
}

// rewriteSequenceRelation makes a query of one relation that names a lake
// sequence (SELECT last_value, is_called FROM s.q, as pg_dump reads it) read
// the sequence's object lakesoul_seq."s<id>" on the catalog PostgreSQL, whose
// grants decide; false when stmt is no such query. It runs only after the
// name resolved to no table, so queries of tables pay nothing for it.
func (s *Session) rewriteSequenceRelation(ctx context.Context, stmt *pg_query.Node) (bool, error) {
	sel := stmt.GetSelectStmt()
	if sel == nil || len(sel.FromClause) != 1 || sel.WithClause != nil || sel.Op != pg_query.SetOperation_SETOP_NONE {
		return false, nil
	}
	rv := sel.FromClause[0].GetRangeVar()
	if rv == nil || rv.Catalogname != "" {
		return false, nil
	}
	schemas := s.searchPath()
	if rv.Schemaname != "" {
		schemas = []string{pgcatalog.Namespace(rv.Schemaname)}
	}
	for _, ns := range schemas {
		id, ok, err := s.cat.SequenceID(ctx, ns, rv.Relname)
		if err != nil {
			return false, err
		}
		if ok {
			if rv.Alias == nil {
				rv.Alias = &pg_query.Alias{Aliasname: rv.Relname}
			}
			rv.Schemaname, rv.Relname = "lakesoul_seq", "s"+strconv.FormatInt(id, 10)
			return true, nil
		}
	}
	return false, nil
}

// sequenceExists is nil when rv names a lake sequence the role sees (42P01
// otherwise).
func (s *Session) sequenceExists(ctx context.Context, rv *pg_query.RangeVar) error {
	ns, name, err := s.sequenceName(rangeVarText(rv))
	if err != nil {
		return err
	}
	_, ok, err := s.cat.SequenceID(ctx, ns, name)
	if err == nil && !ok {
		err = sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rangeVarText(rv))
	}
	return err
}

// rangeVarText is rv as regclass text: schema.name, each part quoted.
func rangeVarText(rv *pg_query.RangeVar) string {
	if rv.Schemaname == "" {
		return quoteIdent(rv.Relname)
	}
	return quoteIdent(rv.Schemaname) + "." + quoteIdent(rv.Relname)
}

// planAlterSequence plans ALTER SEQUENCE [IF EXISTS] s OWNED BY t.col |
// NONE, which pg_dump's restore sends for SERIAL columns: the table then
// drops the sequence with it. Other ALTER SEQUENCE options are 0A000.
func (s *Session) planAlterSequence(n *pg_query.AlterSeqStmt) (pgwire.Statement, error) {
	var owned []*pg_query.Node
	for _, o := range n.Options {
		d := o.GetDefElem()
		if d.GetDefname() != "owned_by" {
			return nil, sqlerr.Unsupported("ALTER SEQUENCE … "+strings.ToUpper(d.GetDefname()), "ALTER SEQUENCE … OWNED BY, setval()")
		}
		owned = d.Arg.GetList().GetItems()
	}
	if len(owned) == 0 {
		return nil, sqlerr.Unsupported("ALTER SEQUENCE without OWNED BY", "ALTER SEQUENCE … OWNED BY, setval()")
	}
	var parts []string
	for _, p := range owned {
		parts = append(parts, p.GetString_().GetSval())
	}
	return s.ddl("ALTER SEQUENCE", func(ctx context.Context) error {
		ns, name, err := s.sequenceName(rangeVarText(n.Sequence))
		if err != nil {
			return err
		}
		tableID := ""
		if len(parts) != 1 || !strings.EqualFold(parts[0], "none") {
			if len(parts) < 2 || len(parts) > 3 {
				return sqlerr.New(sqlerr.SyntaxError, "invalid OWNED BY option: %s", strings.Join(parts, "."))
			}
			schemaName := ""
			if len(parts) == 3 {
				schemaName = parts[0]
			}
			t, err := s.resolveTable(ctx, schemaName, parts[len(parts)-2])
			if err != nil {
				return err
			}
			if !sameSequenceNamespace(ns, t.Namespace) {
				return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "sequence must be in same schema as table it is linked to")
			}
			if len(t.Schema.FieldIndices(parts[len(parts)-1])) == 0 {
				return sqlerr.New(sqlerr.UndefinedColumn, "column %q of relation %q does not exist", parts[len(parts)-1], t.Name)
			}
			tableID = t.ID
		}
		ok, err := s.cat.SetSequenceOwner(ctx, ns, name, tableID)
		if err == nil && !ok && !n.MissingOk {
			err = sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", rangeVarText(n.Sequence))
		}
		return err
	}), nil
}

// sameSequenceNamespace reports whether a sequence named in schema seqNS
// lives in the table's namespace: the same name, or PostgreSQL's "public"
// for LakeSoul's "default" namespace (lakesoul.seq_namespace maps it so).
func sameSequenceNamespace(seqNS, tableNS string) bool {
	return seqNS == tableNS || seqNS == "public" && tableNS == "default"
}

// seqNamespace is the namespace a schema name means for lake objects other
// than tables: "public" is the default namespace (lakesoul.seq_namespace).
func seqNamespace(ns string) string {
	if ns == "public" {
		return catalog.DefaultNamespace
	}
	return ns
}

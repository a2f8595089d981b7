package pgwire

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// This file is a test double of the SQL layer: a Session that understands a
// handful of fixed statements (case-insensitive, ";"-separated):
//
//	SELECT 1                    one int4 row
//	GENERATE n                  n int8 rows 1..n, resumable with max_rows
//	SLEEP                       blocks until its ctx is cancelled
//	BEGIN / COMMIT / ROLLBACK   flip TxStatus
//	SELECT * FROM missing       fails in Parse with 42P01
//	FAIL                        fails in Execute with 22012
//	PANIC                       writes a row, starts another, and panics
//	SET name = value            changes a ParameterStatus value
//	TYPES                       one row of assorted types
//	SELECT $1::t, $2::t, …      echoes its parameters, typed t
//	BIGROW n                    one text row of n bytes
//	COMMITFAIL                  the open implicit transaction's commit fails (40001)
//	TRACE                       one text row: the implicit-transaction calls so far

// testDB is what the sessions of one test server share.
type testDB struct {
	verifiers map[string]string // role → SCRAM verifier
	executes  atomic.Int64      // Portal.Execute calls
	sessions  atomic.Int64      // open sessions
	aborted   atomic.Int64      // AbortStatement calls
	// sleeping receives a value when a SLEEP statement starts waiting,
	// slept the cause of its context's cancellation when it ends.
	sleeping chan struct{}
	slept    chan error
	// privileged are the roles Privileged reports.
	privileged map[string]bool
	// fuzzSafe refuses SLEEP and PANIC and bounds result sizes, so that
	// arbitrary input cannot block or flag the fuzz target.
	fuzzSafe bool
}

func newTestDB() *testDB {
	return &testDB{verifiers: make(map[string]string), sleeping: make(chan struct{}, 16), slept: make(chan error, 16),
		privileged: make(map[string]bool)}
}

// Privileged implements PrivilegedRoles.
func (db *testDB) Privileged(_ context.Context, role string) (bool, error) {
	return db.privileged[role], nil
}

// SCRAMVerifier implements Authenticator.
func (db *testDB) SCRAMVerifier(_ context.Context, role string) (string, error) {
	v, ok := db.verifiers[role]
	if !ok {
		return "", ErrUnknownRole
	}
	return v, nil
}

// NewSession implements SessionFactory.
func (db *testDB) NewSession(_ context.Context, params map[string]string, _ Credential) (Session, error) {
	if params["database"] == "nodb" {
		return nil, sqlerr.New(sqlerr.InvalidCatalogName, "database %q does not exist", params["database"])
	}
	db.sessions.Add(1)
	appName := params["application_name"]
	return &testSession{db: db, tx: 'I', params: map[string]string{
		"server_version":              "16.0 (LakeSoul test)",
		"server_encoding":             "UTF8",
		"client_encoding":             "UTF8",
		"DateStyle":                   "ISO, MDY",
		"TimeZone":                    "UTC",
		"integer_datetimes":           "on",
		"standard_conforming_strings": "on",
		"IntervalStyle":               "postgres",
		"application_name":            appName,
		"is_superuser":                "off",
	}}, nil
}

type testSession struct {
	db     *testDB
	tx     byte
	params map[string]string
	// implicit: an implicit transaction is open; failCommit makes its
	// commit fail; trace records Begin/EndImplicitTransaction's effects.
	implicit, failCommit bool
	trace                []string
}

func (s *testSession) TxStatus() byte { return s.tx }

func (s *testSession) BeginImplicitTransaction(kind ImplicitTransaction) {
	if s.tx == 'I' && !s.implicit {
		s.implicit = true
		switch kind {
		case ImplicitPipelineFirst:
			s.trace = append(s.trace, "pipeline")
		case ImplicitPipeline:
			s.trace = append(s.trace, "pipeline-later")
		default:
			s.trace = append(s.trace, "implicit")
		}
	}
}

func (s *testSession) EndImplicitTransaction(_ context.Context, commit bool) error {
	if !s.implicit {
		return nil
	}
	s.implicit = false
	switch {
	case !commit:
		s.trace = append(s.trace, "rollback")
	case s.failCommit:
		s.failCommit = false
		s.trace = append(s.trace, "commit failed")
		return sqlerr.New(sqlerr.SerializationFailure, "could not serialize access due to concurrent update")
	default:
		s.trace = append(s.trace, "commit")
	}
	return nil
}

func (s *testSession) ParameterStatus() map[string]string { return maps.Clone(s.params) }
func (s *testSession) Close()                             { s.db.sessions.Add(-1) }

func (s *testSession) Parse(_ context.Context, sql string, paramOIDs []uint32) ([]Statement, error) {
	var out []Statement
	for _, part := range strings.Split(sql, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		st, err := s.parseOne(part, paramOIDs)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// testStatement is a parsed statement of the double.
type testStatement struct {
	s      *testSession
	kind   string
	n      int      // GENERATE, BIGROW
	oids   []uint32 // echo parameter types
	name   string   // SET
	value  string   // SET
	tag    string
	noRows bool
}

// boomOID is the OID of type boom, whose codec panics (proto_test.go).
const boomOID = 990001

var typeByName = map[string]uint32{
	"int2": pgtype.Int2OID, "int4": pgtype.Int4OID, "int8": pgtype.Int8OID,
	"float4": pgtype.Float4OID, "float8": pgtype.Float8OID, "bool": pgtype.BoolOID,
	"text": pgtype.TextOID, "varchar": pgtype.VarcharOID, "date": pgtype.DateOID,
	"timestamp": pgtype.TimestampOID, "timestamptz": pgtype.TimestamptzOID,
	"bytea": pgtype.ByteaOID, "uuid": pgtype.UUIDOID, "numeric": pgtype.NumericOID,
	"jsonb": pgtype.JSONBOID, "interval": pgtype.IntervalOID,
	"boom": boomOID,
}

func (s *testSession) parseOne(sql string, paramOIDs []uint32) (*testStatement, error) {
	lower := strings.ToLower(sql)
	fields := strings.Fields(lower)
	st := &testStatement{s: s, kind: fields[0], tag: strings.ToUpper(fields[0])}
	switch {
	case lower == "select 1":
		st.kind = "select1"
	case lower == "select * from missing":
		return nil, sqlerr.New(sqlerr.UndefinedTable, `relation "missing" does not exist`)
	case strings.HasPrefix(lower, "select $"):
		st.kind = "echo"
		for i, item := range strings.Split(strings.TrimPrefix(lower, "select "), ",") {
			_, typ, ok := strings.Cut(strings.TrimSpace(item), "::")
			oid, known := typeByName[typ]
			if !ok || !known {
				return nil, sqlerr.New(sqlerr.SyntaxError, "bad echo item %q", item)
			}
			if i < len(paramOIDs) && paramOIDs[i] != 0 && paramOIDs[i] != oid {
				return nil, sqlerr.New(sqlerr.DatatypeMismatch, "parameter $%d declared %d, used as %s", i+1, paramOIDs[i], typ)
			}
			st.oids = append(st.oids, oid)
		}
	case s.db.fuzzSafe && (st.kind == "sleep" || st.kind == "panic"):
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%s is disabled", st.kind)
	case (st.kind == "generate" || st.kind == "bigrow") && len(fields) == 2:
		n, err := strconv.Atoi(fields[1])
		if err != nil || n < 0 || n > 1<<20 {
			return nil, sqlerr.New(sqlerr.SyntaxError, "bad count %q", fields[1])
		}
		st.n = n
	case st.kind == "set":
		name, value, ok := strings.Cut(strings.TrimSpace(sql[len("set"):]), "=")
		if !ok {
			return nil, sqlerr.New(sqlerr.SyntaxError, "bad SET")
		}
		st.name, st.value = strings.TrimSpace(name), strings.Trim(strings.TrimSpace(value), "'")
		st.noRows = true
	case len(fields) == 1 && st.kind == "panic":
	case len(fields) == 1 && (st.kind == "sleep" || st.kind == "fail" ||
		st.kind == "begin" || st.kind == "commit" || st.kind == "rollback" || st.kind == "commitfail"):
		st.noRows = true
	case lower == "types", lower == "trace":
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "syntax error at or near %q", fields[0])
	}
	return st, nil
}

func (st *testStatement) ParamOIDs() []uint32 { return st.oids }
func (st *testStatement) Tag() string         { return st.tag }

func (st *testStatement) Describe(context.Context) ([]Column, error) {
	switch st.kind {
	case "select1":
		return []Column{{Name: "?column?", TypeOID: pgtype.Int4OID, TypeSize: 4, TypeModifier: -1}}, nil
	case "generate":
		return []Column{{Name: "n", TypeOID: pgtype.Int8OID, TypeSize: 8, TypeModifier: -1}}, nil
	case "bigrow", "trace", "panic":
		return []Column{{Name: "s", TypeOID: pgtype.TextOID, TypeSize: -1, TypeModifier: -1}}, nil
	case "echo":
		cols := make([]Column, len(st.oids))
		for i, oid := range st.oids {
			cols[i] = Column{Name: fmt.Sprintf("c%d", i+1), TypeOID: oid, TypeSize: -1, TypeModifier: -1}
		}
		return cols, nil
	case "types":
		var cols []Column
		for _, c := range typesRow {
			cols = append(cols, Column{Name: c.name, TypeOID: c.oid, TypeSize: -1, TypeModifier: -1})
		}
		return cols, nil
	}
	return nil, nil
}

// typesRow is the row of the TYPES statement.
var typesRow = []struct {
	name  string
	oid   uint32
	value any
}{
	{"i2", pgtype.Int2OID, int16(-2)},
	{"i4", pgtype.Int4OID, int32(1 << 30)},
	{"i8", pgtype.Int8OID, int64(1 << 60)},
	{"f4", pgtype.Float4OID, float32(1.5)},
	{"f8", pgtype.Float8OID, 0.1},
	{"b", pgtype.BoolOID, true},
	{"t", pgtype.TextOID, "héllo"},
	{"d", pgtype.DateOID, time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)},
	{"ts", pgtype.TimestampOID, time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)},
	{"tstz", pgtype.TimestamptzOID, time.Date(2024, 2, 29, 13, 14, 15, 500000000, time.UTC)},
	{"by", pgtype.ByteaOID, []byte{0, 1, 0xfe, 0xff}},
	{"u", pgtype.UUIDOID, [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8}},
	{"num", pgtype.NumericOID, "12345.678"},
	{"nul", pgtype.TextOID, nil},
}

func (st *testStatement) Bind(_ context.Context, params []any) (Portal, error) {
	if len(params) != len(st.oids) {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "want %d params, got %d", len(st.oids), len(params))
	}
	return &testPortal{st: st, params: params, next: 1}, nil
}

type testPortal struct {
	st     *testStatement
	params []any
	next   int // GENERATE: next value to produce
	closed bool
}

func (p *testPortal) Describe(ctx context.Context) ([]Column, error) { return p.st.Describe(ctx) }

func (p *testPortal) Close() {
	if p.closed {
		panic("testPortal closed twice")
	}
	p.closed = true
}

func (p *testPortal) Execute(ctx context.Context, maxRows int, w RowWriter) (string, bool, error) {
	s := p.st.s
	s.db.executes.Add(1)
	if p.closed {
		panic("Execute of a closed portal")
	}
	if s.tx == 'E' && p.st.kind != "commit" && p.st.kind != "rollback" {
		return "", false, sqlerr.New(sqlerr.InFailedSQLTransaction, "current transaction is aborted, commands ignored until end of transaction block")
	}
	switch p.st.kind {
	case "select1":
		if err := w.WriteRow([]any{int32(1)}); err != nil {
			return "", false, err
		}
		return "SELECT 1", true, nil
	case "generate":
		count := 0
		for ; p.next <= p.st.n; p.next++ {
			if maxRows > 0 && count == maxRows {
				return "", false, nil
			}
			if err := ctx.Err(); err != nil {
				return "", false, err
			}
			if err := w.WriteRow([]any{int64(p.next)}); err != nil {
				return "", false, err
			}
			count++
		}
		return fmt.Sprintf("SELECT %d", count), true, nil
	case "bigrow":
		if err := w.WriteRow([]any{strings.Repeat("x", p.st.n)}); err != nil {
			return "", false, err
		}
		return "SELECT 1", true, nil
	case "echo":
		if err := w.WriteRow(p.params); err != nil {
			return "", false, err
		}
		return "SELECT 1", true, nil
	case "types":
		row := make([]any, len(typesRow))
		for i, c := range typesRow {
			row[i] = c.value
		}
		if err := w.WriteRow(row); err != nil {
			return "", false, err
		}
		return "SELECT 1", true, nil
	case "sleep":
		s.db.sleeping <- struct{}{}
		<-ctx.Done()
		select {
		case s.db.slept <- context.Cause(ctx):
		default:
		}
		s.failTx()
		return "", false, fmt.Errorf("sleep interrupted: %w", context.Cause(ctx))
	case "fail":
		s.failTx()
		return "", false, sqlerr.New(sqlerr.DivisionByZero, "division by zero")
	case "panic":
		if err := w.WriteRow([]any{"whole"}); err != nil {
			return "", false, err
		}
		if rb, ok := w.(RowBuilder); ok {
			rb.BeginRow()
			rb.AppendField([]byte("half"))
		}
		panic("test session panics")
	case "trace":
		if err := w.WriteRow([]any{strings.Join(s.trace, ",")}); err != nil {
			return "", false, err
		}
		s.trace = nil
		return "SELECT 1", true, nil
	case "commitfail":
		s.failCommit = true
	case "begin":
		s.tx = 'T'
		s.implicit = false // the implicit transaction becomes the block
	case "commit", "rollback":
		s.tx = 'I'
		s.implicit = false
	case "set":
		s.params[p.st.name] = p.st.value
	}
	return p.st.tag, true, nil
}

// AbortStatement implements StatementAborter.
func (s *testSession) AbortStatement(error) {
	s.db.aborted.Add(1)
	s.failTx()
}

// failTx marks an open transaction failed.
func (s *testSession) failTx() {
	if s.tx == 'T' {
		s.tx = 'E'
	}
}

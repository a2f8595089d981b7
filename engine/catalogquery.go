package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgcatalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// planSelect routes a query: over lake tables to DuckDB; over no relation
// at all to DuckDB too when the DuckDB route answers it as PostgreSQL does
// (nolake.go); over pg_catalog / information_schema, and any other query
// without lake tables, to the catalog PostgreSQL, where the pgcatalog views
// answer with lake objects and every PostgreSQL function behaves exactly as
// clients expect.
func (s *Session) planSelect(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	if sel := stmt.GetSelectStmt(); sel != nil && sel.IntoClause != nil {
		// SELECT … INTO t is CREATE TABLE t AS SELECT … (ctas.go).
		into := sel.IntoClause
		sel.IntoClause = nil
		return s.planCreateTableAs(ctx, &pg_query.CreateTableAsStmt{Query: stmt, Into: into, Objtype: pg_query.ObjectType_OBJECT_TABLE})
	}
	if f, alias, ok := s.tempFunctionCall(stmt); ok {
		return s.planTempFunctionSelect(ctx, stmt, f, alias) // tempfunc.go
	}
	if st, ok, err := s.planAdvisory(ctx, stmt, paramOIDs); ok { // advisory.go
		return st, err
	}
	if st, ok, err := s.planSetConfig(ctx, stmt, paramOIDs); ok { // setconfig.go
		return st, err
	}
	if st, ok, err := s.planPgNotify(stmt); ok { // listen.go
		return st, err
	}
	if st, ok, err := s.planListeningChannels(stmt); ok { // listen.go
		return st, err
	}
	k := classifyRelations(stmt)
	if sel := stmt.GetSelectStmt(); sel != nil && len(sel.LockingClause) > 0 && len(k.lake) > 0 {
		return s.planLockingSelect(ctx, stmt, paramOIDs) // forupdate.go
	}
	if len(k.lake) == 0 && k.timeTravel == 0 && k.catalog == 0 && len(paramOIDs) == 0 {
		if ti, ok := duckAnswers(stmt); ok {
			return s.planNoRelation(ctx, stmt, ti)
		}
	}
	if len(k.lake) > 0 || k.timeTravel > 0 || k.catalog == 0 && (callsSequenceFunctions(stmt) || usesVectors(stmt) || s.castsToEnum(ctx, stmt)) {
		if len(k.lake) == 1 {
			if vs, ok, err := s.planVectorSearch(ctx, stmt, paramOIDs); err != nil { // vectorsearch.go
				return nil, err
			} else if ok {
				return vs, nil
			}
		}
		st, err := s.planDuckQuery(ctx, stmt, paramOIDs)
		if err != nil && sqlerr.Code(err) == sqlerr.UndefinedTable {
			if ok, serr := s.rewriteSequenceRelation(ctx, stmt); serr != nil {
				return nil, serr
			} else if ok {
				return s.planCatalogQuery(ctx, stmt, paramOIDs)
			}
		}
		return st, err
	}
	return s.planCatalogQuery(ctx, stmt, paramOIDs)
}

// planNoRelation plans a query that reads no relation on DuckDB (nolake.go).
// Should DuckDB describe a result column with another type than
// PostgreSQL's (ti, the statement's types as written), the query goes to
// the catalog after all: the client is told PostgreSQL's types or none.
func (s *Session) planNoRelation(ctx context.Context, stmt *pg_query.Node, ti *typeInfo) (pgwire.Statement, error) {
	orig := proto.Clone(stmt).(*pg_query.Node)
	nameValuesColumns(stmt) // nolake.go
	textLiteralTargets(stmt, ti)
	q, err := s.planDuckQuery(ctx, stmt, nil)
	if err != nil {
		return nil, err
	}
	for i, c := range q.cols {
		want := ti.output[i].t.oid
		if ti.output[i].t.literal {
			want = schema.OIDText // PostgreSQL resolves an unknown output column as text
		}
		if c.TypeOID != want {
			s.e.log.Debug("no-relation query answered by the catalog: DuckDB's result type differs",
				"column", c.Name, "duckdb_oid", c.TypeOID, "postgres_oid", want)
			return s.planCatalogQuery(ctx, orig, nil)
		}
	}
	return q, nil
}

// catalogQuery is a query the user wrote that runs on the catalog
// PostgreSQL, in a read-only transaction on the user's own login
// (catalogtx.go): PostgreSQL's privileges and row-level security are all
// that decide what it may do.
type catalogQuery struct {
	s      *Session
	sql    string
	params []uint32
	cols   []pgwire.Column
	// clientParams is how many of params the client binds; the others are
	// the server views' rows (activity.go), bound by the engine.
	clientParams int
	views        []string
	// signals are the columns of pg_cancel_backend/pg_terminate_backend.
	signals []signalColumn
}

func (s *Session) planCatalogQuery(ctx context.Context, stmt *pg_query.Node, paramOIDs []uint32) (pgwire.Statement, error) {
	if fc, ok := adminCallOf(stmt); ok {
		return s.planAdminCall(ctx, stmt, fc, paramOIDs) // admincall.go
	}
	s.rewriteCurrentSettings(stmt) // currentsetting.go
	tree := singleStatementTree(stmt)
	markers, err := s.rewriteSessionFunctions(stmt) // activity.go
	if err != nil {
		return nil, err
	}
	if err := pgcatalog.Rewrite(tree); err != nil {
		return nil, err
	}
	clientParams, views, err := pointServerViews(tree, len(paramOIDs))
	if err != nil {
		return nil, err
	}
	if len(views) > 0 {
		paramOIDs = append(slices.Clip(paramOIDs), make([]uint32, clientParams-len(paramOIDs))...)
		for range views {
			paramOIDs = append(paramOIDs, pgtype.JSONBOID)
		}
	}
	text, err := pg_query.Deparse(tree)
	if err != nil {
		return nil, fmt.Errorf("deparse: %w", err)
	}
	q := &catalogQuery{s: s, sql: text, clientParams: clientParams, views: views}
	err = s.withUserTx(ctx, func(tx pgx.Tx) error {
		sd, err := tx.Conn().PgConn().Prepare(ctx, "", text, paramOIDs)
		if err != nil {
			return err
		}
		q.params = sd.ParamOIDs
		if len(views) == 0 {
			q.clientParams = len(q.params)
		}
		for i, f := range sd.Fields {
			col := pgwire.Column{Name: f.Name, TableOID: f.TableOID, AttrNum: int16(f.TableAttributeNumber),
				TypeOID: f.DataTypeOID, TypeSize: f.DataTypeSize, TypeModifier: f.TypeModifier}
			if name, ok := markers[f.Name]; ok {
				q.signals = append(q.signals, signalColumn{idx: i, terminate: strings.HasSuffix(f.Name, fnTerminate)})
				col = pgwire.Column{Name: name, TypeOID: pgtype.BoolOID, TypeSize: 1, TypeModifier: -1}
			}
			q.cols = append(q.cols, col)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return q, nil
}

// signalled reports whether column i is a pg_cancel/terminate_backend call.
func (q *catalogQuery) signalled(i int) bool {
	for _, sc := range q.signals {
		if sc.idx == i {
			return true
		}
	}
	return false
}

// ParamOIDs are the client's parameters: all but the engine's own.
func (q *catalogQuery) ParamOIDs() []uint32 {
	return q.params[:q.clientParams]
}

func (q *catalogQuery) Describe(context.Context) ([]pgwire.Column, error) { return q.cols, nil }
func (q *catalogQuery) Tag() string                                       { return "SELECT" }

func (q *catalogQuery) Bind(_ context.Context, params []any) (pgwire.Portal, error) {
	if len(params) != len(q.ParamOIDs()) {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement requires %d", len(params), len(q.ParamOIDs()))
	}
	if len(q.views) > 0 {
		// The server views' rows as of this execution.
		params = slices.Clip(params)
		for _, v := range q.views {
			params = append(params, q.s.serverViewJSON(v))
		}
	}
	return &catalogPortal{q: q, args: params}, nil
}

// catalogPortal holds a catalog connection and transaction while its rows
// stream. The query runs under the portal's own context, which each Execute
// cancels when its context is (CancelRequest, statement_timeout, a lost
// client): the catalog then gets a cancel request, not just a closed socket.
type catalogPortal struct {
	q      *catalogQuery
	args   []any
	conn   *pgxpool.Conn
	tx     pgx.Tx
	rr     *pgconn.ResultReader
	ctx    context.Context
	cancel context.CancelFunc
	count  int
}

func (p *catalogPortal) Describe(context.Context) ([]pgwire.Column, error) { return p.q.cols, nil }

// start sends the query with the parameter types the statement was prepared
// with (so a declared timestamptz stays one), values in text form.
func (p *catalogPortal) start(ctx context.Context) error {
	conn, tx, err := p.q.s.beginUserTx(ctx, pgx.ReadOnly)
	if err != nil {
		return err
	}
	p.conn, p.tx = conn, tx
	m := tx.Conn().TypeMap()
	values := make([][]byte, len(p.args))
	for i, a := range p.args {
		if a == nil {
			continue
		}
		b, err := m.Encode(p.q.params[i], pgtype.TextFormatCode, a, nil)
		if err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err, fmt.Sprintf("parameter $%d", i+1))
		}
		values[i] = b
	}
	p.rr = tx.Conn().PgConn().ExecParams(p.ctx, p.q.sql, values, p.q.params, nil, resultFormats(p.q.cols))
	return nil
}

// resultFormats asks the catalog for records in binary, the one form that
// names their fields' types (a record's text does not), so that Execute
// hands the wire layer a pgwire.Record it encodes in either format; every
// other column comes as text.
func resultFormats(cols []pgwire.Column) []int16 {
	var out []int16
	for i, c := range cols {
		if c.TypeOID == schema.OIDRecord {
			if out == nil {
				out = make([]int16, len(cols))
			}
			out[i] = pgtype.BinaryFormatCode
		}
	}
	return out
}

// decodeRecord reads a record in PostgreSQL's binary form: its field count,
// then each field's type OID and value (length -1 for NULL).
func decodeRecord(m *pgtype.Map, raw []byte) (pgwire.Record, error) {
	var r pgwire.Record
	bad := func() (pgwire.Record, error) { return r, fmt.Errorf("malformed binary record from the catalog") }
	if len(raw) < 4 {
		return bad()
	}
	n := int(binary.BigEndian.Uint32(raw))
	raw = raw[4:]
	for range n {
		if len(raw) < 8 {
			return bad()
		}
		oid, size := binary.BigEndian.Uint32(raw), int32(binary.BigEndian.Uint32(raw[4:]))
		raw = raw[8:]
		var v any
		if size >= 0 {
			if int(size) > len(raw) {
				return bad()
			}
			field := raw[:size]
			raw = raw[size:]
			var err error
			switch t, ok := m.TypeForOID(oid); {
			case oid == schema.OIDRecord:
				v, err = decodeRecord(m, field)
			case ok:
				v, err = t.Codec.DecodeValue(m, oid, pgtype.BinaryFormatCode, field)
			default:
				err = fmt.Errorf("a record field of type %d", oid)
			}
			if err != nil {
				return r, err
			}
		}
		r.OIDs, r.Values = append(r.OIDs, oid), append(r.Values, v)
	}
	return r, nil
}

func (p *catalogPortal) Execute(ctx context.Context, maxRows int, w pgwire.RowWriter) (string, bool, error) {
	if p.ctx == nil {
		// The result outlives this call when the portal is suspended, so it
		// is bound to the portal's context, not this call's.
		p.ctx, p.cancel = context.WithCancel(context.WithoutCancel(ctx))
	}
	// Registered before the query is sent: PostgreSQL runs an extended-
	// protocol statement before it flushes the RowDescription, so sending
	// it (start) already waits for the whole execution.
	stop := context.AfterFunc(ctx, safego.Guard(p.cancel))
	defer stop()
	if p.rr == nil {
		if err := p.start(ctx); err != nil {
			return "", true, err
		}
	}

	m := p.tx.Conn().TypeMap()
	row := make([]any, len(p.q.cols))
	// A spill keeps the catalog's text of the values, decoded when read.
	_, keepText := w.(interface{ keepsCatalogText() })
	for n := 0; maxRows == 0 || n < maxRows; n++ {
		if err := ctx.Err(); err != nil {
			return "", true, sqlerr.ErrCanceled
		}
		if !p.rr.NextRow() {
			tag, err := p.rr.Close()
			p.rr = nil
			if err != nil {
				return "", true, err
			}
			if tag.String() == "" {
				return fmt.Sprintf("SELECT %d", p.count), true, nil
			}
			return tag.String(), true, nil
		}
		for i, raw := range p.rr.Values() {
			if p.q.signalled(i) {
				continue // below
			}
			if p.q.cols[i].TypeOID == schema.OIDRecord && raw != nil {
				// Binary (resultFormats): decoded now, kept or spilled
				// as a pgwire.Record.
				v, err := decodeRecord(m, raw)
				if err != nil {
					return "", true, err
				}
				row[i] = v
				continue
			}
			if keepText {
				row[i] = nil
				if raw != nil {
					row[i] = catalogText(raw)
				}
				continue
			}
			v, err := decodeText(m, p.q.cols[i].TypeOID, raw)
			if err != nil {
				return "", true, err
			}
			row[i] = v
		}
		for _, sc := range p.q.signals {
			var pid any
			if raw := p.rr.Values()[sc.idx]; raw != nil {
				n, err := strconv.ParseInt(string(raw), 10, 32)
				if err != nil {
					return "", true, fmt.Errorf("signal argument %q: %w", raw, err)
				}
				pid = int32(n)
			}
			v, err := p.q.s.signal(ctx, pid, sc.terminate)
			if err != nil {
				return "", true, err
			}
			row[sc.idx] = v
		}
		if err := w.WriteRow(row); err != nil {
			return "", true, err
		}
		p.count++
	}
	return "", false, nil
}

// decodeText turns a text-format value from the catalog into the Go value the
// wire layer encodes for the same type; types pgtype does not know stay text.
func decodeText(m *pgtype.Map, oid uint32, raw []byte) (any, error) {
	if raw == nil {
		return nil, nil
	}
	if t, ok := m.TypeForOID(oid); ok {
		return t.Codec.DecodeValue(m, oid, pgtype.TextFormatCode, raw)
	}
	return string(raw), nil
}

func (p *catalogPortal) Close() {
	if p.cancel != nil {
		p.cancel()
	}
	if p.rr != nil {
		p.rr.Close()
	}
	if p.tx != nil {
		p.tx.Rollback(context.Background())
	}
	if p.conn != nil {
		p.conn.Release()
	}
}

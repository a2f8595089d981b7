package pgwire

import (
	"context"
	"time"
)

// This file is the contract between the protocol layer (this package) and the
// SQL layer above it. pgwire owns framing, startup, authentication, the
// simple/extended query state machine, value encoding and cancellation; it
// knows nothing of SQL. The SQL layer implements Session.

// Authenticator verifies who a client is.
type Authenticator interface {
	// SCRAMVerifier returns the stored SCRAM-SHA-256 verifier of a login role
	// exactly as PostgreSQL keeps it in pg_authid.rolpassword:
	// "SCRAM-SHA-256$<iterations>:<base64 salt>$<base64 StoredKey>:<base64 ServerKey>".
	// It returns ErrUnknownRole when the role does not exist, may not log in, or
	// has no SCRAM password; the server then fails authentication with 28P01
	// without revealing which of these it was.
	SCRAMVerifier(ctx context.Context, role string) (string, error)
}

// SessionFactory opens the SQL session of an authenticated connection.
type SessionFactory interface {
	// NewSession is called once per connection after authentication succeeded.
	// params are the startup parameters the client sent (user, database,
	// application_name, client_encoding, DateStyle, TimeZone, …); cred is
	// what the client proved during authentication.
	NewSession(ctx context.Context, params map[string]string, cred Credential) (Session, error)
}

// Credential is what a client proved about its role during authentication.
// It lets the SQL layer log in elsewhere as that same role (the catalog
// PostgreSQL, which then authenticates the user itself) without the server
// holding a password it was never given. Exactly one form is set.
type Credential struct {
	// Password is the password the client sent (cleartext authentication
	// over TLS).
	Password string
	// SCRAMClientKey is the role's SCRAM ClientKey, recovered from the
	// client's proof (ClientProof XOR ClientSignature) and checked against
	// the stored key; SCRAMServerKey is the verifier's ServerKey. With both,
	// a SCRAM-SHA-256 exchange with any server holding the same verifier can
	// be completed, as connection poolers do; neither reveals the password.
	SCRAMClientKey, SCRAMServerKey []byte
}

// Session is one client connection's SQL state: its prepared statements'
// meaning, its settings and its transaction. The protocol layer serialises
// calls: at most one method of a Session runs at a time, except that the ctx
// passed to a running call may be cancelled from another goroutine (CancelRequest,
// statement_timeout, connection loss).
// SessionCursors is implemented by a Session whose SQL cursors (DECLARE …
// CURSOR) are also portals of the protocol, as PostgreSQL's are (psycopg 3's
// named cursors DECLARE one, then Describe and Execute the portal of that
// name): Describe, Execute and Close of a portal name the connection did not
// bind find the cursor, whose results are text (a cursor declared without
// BINARY). Execute's row limit fetches the cursor's next rows.
type SessionCursors interface {
	// Cursor returns the open cursor name as a portal, with its columns.
	Cursor(name string) (p Portal, cols []Column, ok bool)
	// CloseCursor closes cursor name; false when there is none.
	CloseCursor(name string) bool
}

type Session interface {
	// Parse turns query text into statements without executing anything.
	// Simple-query text may hold several statements (";"-separated); for the
	// extended protocol the server rejects more than one. Empty text yields no
	// statements (EmptyQueryResponse). paramOIDs are the types the client
	// declared in Parse (0 = unspecified); the statement reports the types it
	// settled on through ParamOIDs.
	Parse(ctx context.Context, sql string, paramOIDs []uint32) ([]Statement, error)

	// TxStatus is the transaction status for ReadyForQuery: 'I' idle, 'T' in a
	// transaction block, 'E' in a failed transaction block.
	TxStatus() byte

	// BeginImplicitTransaction is called before each statement of a simple
	// query that holds several statements (ImplicitQuery), and before each
	// Execute of a pipeline — the extended protocol's statements up to a
	// Sync — outside a block, except one alone before its Sync
	// (ImplicitPipelineFirst for the pipeline's first Execute,
	// ImplicitPipeline for the later ones; pipeline.go).
	// Outside a transaction block it opens an implicit one, which groups
	// the statements that follow until EndImplicitTransaction: their
	// effects become visible together or not at all. Inside a block,
	// explicit or implicit, it opens nothing. A BEGIN among the statements
	// turns the implicit transaction into an explicit block (the statements
	// before it are part of that block); a COMMIT or ROLLBACK ends it, and
	// the next call opens a new one. TxStatus reports an implicit
	// transaction as 'I'.
	//
	// Statements that cannot run inside a transaction block fail (25001)
	// in a simple query's implicit transaction, and in a pipeline after
	// any other statement of the pipeline; as the pipeline's first
	// statement they end the empty transaction and run on their own, as
	// PostgreSQL runs them.
	BeginImplicitTransaction(kind ImplicitTransaction)

	// EndImplicitTransaction ends the implicit transaction, if one is open:
	// it commits when commit is true (after the last statement succeeded;
	// the error is the commit's failure, which rolled everything back) and
	// rolls back otherwise (a statement failed). An explicit block stays
	// open, failed or not.
	EndImplicitTransaction(ctx context.Context, commit bool) error

	// ParameterStatus returns the run-time parameters to report to the client
	// after startup (server_version, TimeZone, …) and after any statement that
	// changed one of them (the server calls it after each Execute and sends
	// ParameterStatus for values that changed).
	ParameterStatus() map[string]string

	// Close releases the session's resources; the connection is gone.
	Close()
}

// ImplicitTransaction tells BeginImplicitTransaction which statement is
// about to run.
type ImplicitTransaction uint8

const (
	// ImplicitQuery: a statement of a simple query of several.
	ImplicitQuery ImplicitTransaction = iota
	// ImplicitPipelineFirst: the first Execute of a pipeline (since the
	// last Sync).
	ImplicitPipelineFirst
	// ImplicitPipeline: a later Execute of the same pipeline.
	ImplicitPipeline
)

// SessionIdleTimeout may be implemented by a Session that bounds how long
// its client may keep it waiting inside a transaction block (PostgreSQL's
// idle_in_transaction_session_timeout). The server asks after each
// ReadyForQuery reporting 'T' or 'E'; when the client sends nothing for that
// long, the connection ends with FATAL 25P03 and the Session is closed.
type SessionIdleTimeout interface {
	// IdleInTransactionTimeout is the bound now (0 = none).
	IdleInTransactionTimeout() time.Duration
}

// SessionPID may be implemented by a Session to learn its process ID (the
// pid of BackendKeyData, pg_stat_activity and pg_cancel_backend); it is
// called once, before the session's first statement.
type SessionPID interface {
	SetBackendPID(pid uint32)
}

// StatementAborter may be implemented by a Session to learn that the
// statement it was serving failed outside its own error handling: a panic
// that reached the protocol layer, in a call of the Session or in the
// protocol's own handling of the statement's messages. The server then
// answers the statement with ERROR XX000 and keeps the connection; the
// Session ends the statement as after any error (a transaction block goes
// to the failed state). AbortStatement is called between calls of the
// Session, like them one at a time.
type StatementAborter interface {
	AbortStatement(err error)
}

// Statement is one parsed statement (a prepared statement in the extended
// protocol, or one statement of a simple query).
type Statement interface {
	// ParamOIDs returns one type OID per $n placeholder.
	ParamOIDs() []uint32
	// Describe returns the columns the statement would produce, without
	// executing it. A nil slice means the statement returns no rows (NoData).
	Describe(ctx context.Context) ([]Column, error)
	// Bind supplies parameter values and returns a portal ready to execute.
	// Values are already decoded by the protocol layer into Go values (see
	// Param); nil is SQL NULL.
	Bind(ctx context.Context, params []any) (Portal, error)
	// Tag is the statement's command word for an empty-statement check and for
	// logging (e.g. "SELECT", "INSERT").
	Tag() string
}

// Portal is a bound statement. It may be executed in several steps.
type Portal interface {
	// Describe returns the result columns (nil = NoData) without executing.
	Describe(ctx context.Context) ([]Column, error)
	// Execute runs the portal, or resumes it where a previous call stopped,
	// writing at most maxRows rows to w (0 = no limit). When rows remain it
	// returns done=false and the server answers PortalSuspended; otherwise it
	// returns done=true and the command tag ("SELECT 3", "INSERT 0 5",
	// "CREATE TABLE", …). Values passed to w follow the Column types:
	// bool, int16, int32, int64, float32, float64, string, []byte, time.Time,
	// pgtype.Numeric or string for numeric, [16]byte for uuid, or nil.
	Execute(ctx context.Context, maxRows int, w RowWriter) (tag string, done bool, err error)
	// Close releases the portal. It is called exactly once.
	Close()
}

// RowWriter receives result rows. The slice is only valid during the call.
type RowWriter interface {
	WriteRow(values []any) error
}

// Column describes one result column, as RowDescription carries it.
type Column struct {
	Name         string
	TableOID     uint32
	AttrNum      int16
	TypeOID      uint32
	TypeSize     int16
	TypeModifier int32
}

// COPY. A Portal of a COPY statement implements CopyInPortal (COPY … FROM
// STDIN) or CopyOutPortal (COPY … TO STDOUT). When such a portal is executed,
// by a simple query or by Execute, the server runs the COPY sub-protocol
// instead of streaming DataRows: CopyInResponse, then the client's
// CopyData/CopyDone/CopyFail; or CopyOutResponse, CopyData per row, CopyDone.
// Either ends with CommandComplete carrying the returned tag ("COPY n").
// Describe of a COPY statement or portal answers NoData, as PostgreSQL does.
//
// The division of work: this package decodes and encodes the COPY data
// format (text, CSV, binary framing, escapes, quoting, NULL markers, header
// line) and the values of COPY TO; the SQL layer parses the COPY options into
// a CopyFormat, converts the field bytes of COPY FROM into typed values, and
// reports bad values (22P02 …) with CopyRowReader.Line as context.

// CopyFormatKind is the data format of a COPY.
type CopyFormatKind uint8

// COPY data formats.
const (
	CopyText CopyFormatKind = iota
	CopyCSV
	CopyBinary
)

// CopyFormat is the data format of a COPY, from its options. Zero fields take
// PostgreSQL's defaults for the Kind (see Defaults).
type CopyFormat struct {
	Kind CopyFormatKind
	// Delimiter separates fields: tab for text, ',' for CSV.
	Delimiter byte
	// Null is the text of a NULL field: `\N` for text, "" for CSV (unquoted).
	Null string
	// Quote and Escape are CSV's quote and escape characters ('"' both).
	Quote, Escape byte
	// Header: COPY FROM skips the first line; COPY TO writes the column names.
	Header bool
	// Columns is the number of fields per row of COPY FROM (it is announced
	// in CopyInResponse).
	Columns int
}

// WithDefaults returns f with unset fields at PostgreSQL's defaults.
func (f CopyFormat) WithDefaults(nullSet bool) CopyFormat {
	if f.Delimiter == 0 {
		f.Delimiter = '\t'
		if f.Kind == CopyCSV {
			f.Delimiter = ','
		}
	}
	if !nullSet && f.Kind == CopyText {
		f.Null = `\N`
	}
	if f.Quote == 0 {
		f.Quote = '"'
	}
	if f.Escape == 0 {
		f.Escape = f.Quote
	}
	return f
}

// CopyInPortal is a Portal of COPY … FROM STDIN.
type CopyInPortal interface {
	Portal
	// CopyInFormat is the format the client must send.
	CopyInFormat() CopyFormat
	// CopyIn consumes the client's rows and returns the command tag. It
	// should read rows until io.EOF; if it returns early without an error,
	// the server discards the rest of the data. Nothing it did may remain
	// visible when it returns an error.
	CopyIn(ctx context.Context, rows CopyRowReader) (tag string, err error)
}

// CopyRowReader yields the rows of COPY … FROM STDIN as the client sent them.
type CopyRowReader interface {
	// ReadRow returns the fields of the next row, nil for NULL: text with
	// escapes resolved (text format), unquoted text (CSV), or each value's
	// binary representation (binary format). The slices are valid until the
	// next call. It returns io.EOF after the last row; malformed data is a
	// 22P04 error, a CopyFail from the client 57014, the end of the
	// connection an error the caller must simply return.
	ReadRow() ([][]byte, error)
	// Line is the 1-based line number (row number in binary format) of the
	// row ReadRow returned last, header included, for error messages.
	Line() int64
}

// CopyOutPortal is a Portal of COPY … TO STDOUT. The server calls Execute
// once, with no row limit, and writes each row as one CopyData line; values
// follow the same Column types as for DataRow. Execute's tag is sent in
// CommandComplete ("COPY n").
type CopyOutPortal interface {
	Portal
	// CopyOutFormat is the format to write and the columns of the rows.
	CopyOutFormat() (CopyFormat, []Column)
}

// PreparedStatements are a connection's named prepared statements (those the
// extended protocol's Parse and SQL PREPARE created, one namespace as in
// PostgreSQL), as SQL statements reach them (PREPARE, EXECUTE, DEALLOCATE,
// DISCARD ALL). Its methods may only be called while
// a call of the Session runs (Execute of a portal): they change the
// connection's state, which only that goroutine touches. Portals already
// bound from a dropped statement stay usable, as in PostgreSQL.
type PreparedStatements interface {
	// Deallocate drops the named prepared statement. It reports false when
	// there is none by that name; the unnamed statement is never dropped.
	Deallocate(name string) bool
	// DeallocateAll drops every named prepared statement.
	DeallocateAll()
	// Add makes stmt (prepared from query) the named prepared statement;
	// false when the name is taken.
	Add(name, query string, stmt Statement) bool
	// Lookup returns the named prepared statement.
	Lookup(name string) (Statement, bool)
}

// PreparedStatementUser is implemented by Sessions that drop prepared
// statements from SQL. The server calls UsePreparedStatements once, right
// after NewSession and before any other call of the Session.
type PreparedStatementUser interface {
	UsePreparedStatements(PreparedStatements)
}

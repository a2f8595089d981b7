// Package pgwire is the PostgreSQL wire protocol (version 3.0) front door of
// LakeSoul-Go. It owns framing and the limits an unauthenticated or hostile
// client meets (message and row sizes, connections, the authentication
// timeout and failure delay), startup negotiation, SCRAM-SHA-256
// authentication (or, when Config.PasswordAuth asks for it, cleartext
// passwords on TLS connections only, checked against the same SCRAM
// verifiers), the simple and extended query state machines, value
// encoding and query cancellation. It knows nothing of SQL: every statement is
// handed to the Session interface of handler.go.
//
// The package is layered; each file holds one layer or one concern:
//
//	server.go    Server: listeners, the set of live connections, Shutdown
//	slots.go     connection limits: sockets, session slots, reserved slots
//	cancel.go    BackendKeyData keys and CancelRequest routing
//	conn.go      one connection: lifecycle and the message loop
//	framing.go   frontend message framing and its size limits
//	input.go     the socket reader goroutine that notices a lost client
//	hangup_*.go  watching a socket for the peer's hangup (Linux: POLLRDHUP)
//	output.go    buffered message output
//	startup.go   SSLRequest/GSSEncRequest/StartupMessage negotiation
//	auth.go      the SASL and cleartext password exchanges on the wire
//	scram.go     SCRAM-SHA-256 (RFC 5802/7677) server and verifiers
//	saslprep.go  password normalisation for new verifiers
//	call.go      running one Session call: ctx, cancellation, panics
//	simple.go    the simple query protocol ('Q')
//	extended.go  the extended query protocol (Parse/Bind/Describe/Execute/…)
//	portal.go    prepared statement and portal state, format codes
//	params.go    Bind parameter decoding into Go values
//	rows.go      RowDescription and DataRow encoding
//	copy.go      the COPY sub-protocol and the text/CSV/binary COPY formats
//	values.go    per-type value encoding details
//	datetime.go  date/time text input and timestamptz text output
//	errors.go    ErrorResponse construction and error classes
//
// Concurrency: every connection is served by one goroutine that alone calls
// its Session and alone writes to its socket. Once the client authenticated,
// a helper goroutine per connection reads the socket ahead, into a bounded
// buffer, so that a vanished client cancels the running call. CancelRequest and Shutdown reach a connection only by cancelling the
// context of its running call and by setting flags the connection goroutine
// checks.
package pgwire

package flightsql

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Transactions. A Flight SQL transaction is the client's engine session's
// transaction block: BeginTransaction runs BEGIN, EndTransaction COMMIT or
// ROLLBACK, with the block's meaning over pgwire (writes of all tables
// commit together, the block reads its own writes). A session holds one
// block, so a client has at most one transaction; while it is open, every
// statement must name it, and a statement naming another is NotFound.

// BeginTransaction opens the client's transaction.
func (s *Server) BeginTransaction(ctx context.Context, _ flightsql.ActionBeginTransactionRequest) ([]byte, error) {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return nil, err
	}
	defer c.unlock()
	if c.txn != "" {
		return nil, status.Error(codes.FailedPrecondition, "a transaction is already open on this connection")
	}
	if err := runText(ctx, c, "BEGIN"); err != nil {
		return nil, err
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	c.txn = hex.EncodeToString(b[:])
	return []byte(c.txn), nil
}

// EndTransaction commits or rolls back the client's transaction.
func (s *Server) EndTransaction(ctx context.Context, req flightsql.ActionEndTransactionRequest) error {
	c := clientFrom(ctx)
	if err := c.lockInOrder(ctx); err != nil {
		return err
	}
	defer c.unlock()
	if c.txn == "" || string(req.GetTransactionId()) != c.txn {
		return status.Error(codes.NotFound, "unknown transaction")
	}
	text := "ROLLBACK"
	if req.GetAction() == flightsql.EndTransactionCommit {
		text = "COMMIT"
	}
	c.txn = "" // the block ends whatever COMMIT answers
	return runText(ctx, c, text)
}

// runText runs one statement without a result. Call with the session locked.
func runText(ctx context.Context, c *client, text string) error {
	st, err := planOne(ctx, c, text)
	if err != nil {
		return err
	}
	_, err = execUpdate(ctx, c, st, nil)
	return err
}

// checkTxn checks a statement's transaction id against the client's open
// transaction. Call with the session locked.
func checkTxn(c *client, id []byte) error {
	switch {
	case len(id) == 0 && c.txn != "":
		return status.Error(codes.FailedPrecondition, "a transaction is open on this connection: statements must name it")
	case len(id) > 0 && string(id) != c.txn:
		return status.Error(codes.NotFound, "unknown transaction")
	}
	return nil
}

package cdc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Connections to a PostgreSQL publisher. Every connection sets the session
// settings the text forms of values are parsed in (textvalue.go).
var pgSessionParams = map[string]string{
	"datestyle":          "ISO, MDY",
	"timezone":           "UTC",
	"intervalstyle":      "postgres",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
	"application_name":   "lakesoul_subscription",
}

// pgConfig parses a CONNECTION string; replication asks for a walsender
// in database mode.
func pgConfig(conn string, replication bool) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(conn)
	if err != nil {
		return nil, sqlerr.New(sqlerr.SyntaxError, "invalid connection string: %v", redactParseError(err))
	}
	for k, v := range pgSessionParams {
		cfg.RuntimeParams[k] = v
	}
	if replication {
		cfg.RuntimeParams["replication"] = "database"
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 10 * time.Second
	}
	return cfg, nil
}

// redactParseError is a connection-string parse error without the string
// (which may hold the password).
func redactParseError(err error) string {
	var pe *pgconn.ParseConfigError
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap().Error()
	}
	return "cannot parse it"
}

// connectPG opens a normal connection to the publisher.
func connectPG(ctx context.Context, conn string) (*pgx.Conn, error) {
	cfg, err := pgConfig(conn, false)
	if err != nil {
		return nil, err
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, connectError(err)
	}
	return c, nil
}

// connectReplication opens a replication connection (a walsender) to the
// publisher; a role without the REPLICATION attribute gets 42501.
func connectReplication(ctx context.Context, conn string) (*pgconn.PgConn, error) {
	cfg, err := pgConfig(conn, true)
	if err != nil {
		return nil, err
	}
	c, err := pgconn.ConnectConfig(ctx, &cfg.Config)
	if err != nil {
		return nil, connectError(err)
	}
	return c, nil
}

// connectError is the client's error for a failed connection to a
// source: 42501 when the source refused the role's rights, 08001 otherwise,
// as PostgreSQL's CREATE SUBSCRIPTION says it.
func connectError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == sqlerr.InsufficientPrivilege || strings.HasPrefix(pe.Code, "28")) {
		code := sqlerr.InsufficientPrivilege
		if pe.Code != sqlerr.InsufficientPrivilege {
			code = sqlerr.UnableToConnect
		}
		return &sqlerr.Error{Code: code, Message: "could not connect to the publisher: " + pe.Message, Err: err}
	}
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Message
	}
	return &sqlerr.Error{Code: sqlerr.UnableToConnect, Message: "could not connect to the publisher: " + msg, Err: err}
}

// sourceError is a failure of a statement on the source: the source's
// SQLSTATE with its message, marked as the publisher's, or 08006 for a
// lost connection (never mistaken for the catalog's).
func sourceError(what string, err error) error {
	if err == nil {
		return nil
	}
	var se *sqlerr.Error
	if errors.As(err, &se) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return &sqlerr.Error{Code: pe.Code, Message: fmt.Sprintf("publisher: %s: %s", what, pe.Message), Detail: pe.Detail, Err: err}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, new(*safego.PanicError)) {
		return err // not the source's failure: a panic stays an internal error
	}
	return &sqlerr.Error{Code: sqlerr.ConnectionFailure, Message: fmt.Sprintf("publisher: %s: %v", what, err), Err: err}
}

// quoteIdent quotes a PostgreSQL identifier.
func quoteIdent(s string) string { return pgx.Identifier{s}.Sanitize() }

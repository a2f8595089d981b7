package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Two kinds of catalog transactions, and the trust boundary between them.
//
//   - A user transaction (beginUserTx) runs SQL the user wrote — queries of
//     pg_catalog, information_schema and lakesoul.* relations, the argument
//     expressions of time travel and CALL — on a connection whose login role
//     is the user (catalog.AcquireAs, authenticated by PostgreSQL). It is
//     READ ONLY unless the server wrote the statement itself (administration
//     calls, admincall.go). Nothing the SQL does can reach beyond the
//     user's own rights: PostgreSQL checks role switches against the login.
//   - A server transaction (beginServerTx) runs statements the server wrote,
//     with every user-supplied value as a bind parameter, on the owner's
//     pool under set_config('role', <user>, true), so row-level security
//     decides what the user's request sees and changes. No user-written SQL
//     text ever reaches it.

// Limits of user transactions. SQL a user wrote runs on the shared
// catalog, so what one statement may take there is bounded for every
// user transaction, whatever the session set: statement_timeout at most
// Config.CatalogStatementTimeout, and work_mem PostgreSQL's default
// (userWorkMem), for each sort or hash before it spills. Spilling is
// bounded by the private catalog's temp_file_limit, a result row by the
// user connections' message limit (catalog.SetUserMessageLimit) and a
// backend's memory by the private catalog's data limit
// (pgcluster.Options.BackendDataLimit); ARCHITECTURE.md (Resource bounds)
// says what an external catalog must bound itself.
const userWorkMem = "4MB"

// beginUserTx starts a transaction on the session user's own catalog login
// with the session's lake search path, time zone and statement_timeout
// (capped), and work_mem.
func (s *Session) beginUserTx(ctx context.Context, mode pgx.TxAccessMode) (*pgxpool.Conn, pgx.Tx, error) {
	conn, err := s.e.cat.AcquireAs(ctx, s.user, s.cred)
	if err != nil {
		return nil, nil, err
	}
	tx, err := s.beginWithSettings(ctx, conn, mode, "", true)
	if err != nil {
		conn.Release()
		return nil, nil, err
	}
	return conn, tx, nil
}

// withUserTx runs fn in a read-only user transaction.
func (s *Session) withUserTx(ctx context.Context, fn func(pgx.Tx) error) error {
	conn, tx, err := s.beginUserTx(ctx, pgx.ReadOnly)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	return fn(tx)
}

// beginServerTx starts a transaction on the owner's pool that runs as the
// session's role, for statements the server wrote.
func (s *Session) beginServerTx(ctx context.Context, mode pgx.TxAccessMode) (*pgxpool.Conn, pgx.Tx, error) {
	role := ""
	if s.user != s.e.catalogRole {
		role = s.user
	}
	var conn *pgxpool.Conn
	var tx pgx.Tx
	err := s.e.cat.OnFreshConn(ctx, func() (err error) {
		if conn, err = s.e.cat.Pool().Acquire(ctx); err != nil {
			return err
		}
		if tx, err = s.beginWithSettings(ctx, conn, mode, role, false); err != nil {
			conn.Release()
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return conn, tx, nil
}

// withServerTx runs fn in a read-only server transaction.
func (s *Session) withServerTx(ctx context.Context, fn func(pgx.Tx) error) error {
	conn, tx, err := s.beginServerTx(ctx, pgx.ReadOnly)
	if err != nil {
		return err
	}
	defer conn.Release()
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only
	return fn(tx)
}

// beginWithSettings begins a transaction on conn and applies the session's
// settings to it (transaction-local: nothing outlives it), switching to role
// when it is not empty; a user transaction gets the limits above.
func (s *Session) beginWithSettings(ctx context.Context, conn *pgxpool.Conn, mode pgx.TxAccessMode, role string, user bool) (pgx.Tx, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: mode})
	if err != nil {
		return nil, err
	}
	// IntervalStyle stays the catalog's own (postgres): the server reads
	// the catalog's intervals and writes them in the session's style.
	setup := "SELECT set_config('lakesoul.search_path', $1, true), set_config('TimeZone', $2, true)"
	args := []any{strings.Join(s.searchPathSchemas(), ","), s.settings["timezone"].value}
	if role != "" {
		args = append(args, role)
		setup += fmt.Sprintf(", set_config('role', $%d, true)", len(args))
	}
	d := s.statementTimeout()
	if limit := s.e.cfg.CatalogStatementTimeout; user && limit > 0 && (d == 0 || d > limit) {
		d = limit
	}
	if d > 0 { // the catalog enforces statement_timeout itself (57014)
		args = append(args, strconv.FormatInt(max(d.Milliseconds(), 1), 10))
		setup += fmt.Sprintf(", set_config('statement_timeout', $%d, true)", len(args))
	}
	if user {
		args = append(args, userWorkMem)
		setup += fmt.Sprintf(", set_config('work_mem', $%d, true)", len(args))
	}
	if _, err := tx.Exec(ctx, setup, args...); err != nil {
		tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // the error that matters is err
		return nil, err
	}
	return tx, nil
}

// execCommit runs one statement in tx with text-format parameters, reads its
// rows and commits; the commit's outcome is the call's.
func execCommit(ctx context.Context, tx pgx.Tx, query string, oids []uint32, values [][]byte) ([][]any, error) {
	m := tx.Conn().TypeMap()
	rr := tx.Conn().PgConn().ExecParams(ctx, query, values, oids, nil, nil)
	var out [][]any
	for rr.NextRow() {
		row := make([]any, len(rr.FieldDescriptions()))
		for i, raw := range rr.Values() {
			v, err := decodeText(m, rr.FieldDescriptions()[i].DataTypeOID, raw)
			if err != nil {
				rr.Close()
				return nil, err
			}
			row[i] = v
		}
		out = append(out, row)
	}
	if _, err := rr.Close(); err != nil {
		return nil, err
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, err
	}
	return out, nil
}

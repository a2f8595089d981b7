package catalog

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/metrics"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// ErrCommitOutcomeUnknown is wrapped by a commit error when the catalog could
// not be reached again within CommitRetryWindow after a failure that happened
// while the commit was in flight: the commit may or may not have landed. A
// writer must then keep its files (at worst they are orphans nobody reads)
// rather than delete files a committed version may list.
var ErrCommitOutcomeUnknown = errors.New("the outcome of the commit is unknown (catalog unreachable)")

// CommitRef names what a commit call sends: a table and the commit ids of
// its partitions (data_commit_info.commit_id, listed per version by
// lakesoul.history's commit_ids).
type CommitRef struct {
	TableID   string
	CommitIDs []uuid.UUID
}

// refsOf are the CommitRefs of commits.
func refsOf(commits []TableCommit) []CommitRef {
	refs := make([]CommitRef, len(commits))
	for i, tc := range commits {
		refs[i] = CommitRef{TableID: tc.TableID}
		for _, p := range tc.Parts {
			refs[i].CommitIDs = append(refs[i].CommitIDs, p.CommitID)
		}
	}
	return refs
}

// OutcomeUnknown is the error of a commit of refs whose outcome stays
// unknown after cause, a lost catalog connection: 08007
// transaction_resolution_unknown, which PostgreSQL has for exactly this,
// naming the tables and commit ids so that the client can look them up. It
// wraps ErrCommitOutcomeUnknown (writers keep their files) and cause.
func OutcomeUnknown(refs []CommitRef, cause error) error {
	var detail []string
	for _, r := range refs {
		if len(r.CommitIDs) == 0 {
			continue
		}
		ids := make([]string, len(r.CommitIDs))
		for i, id := range r.CommitIDs {
			ids[i] = id.String()
		}
		detail = append(detail, fmt.Sprintf("table %s: commit id %s", r.TableID, strings.Join(ids, ", ")))
	}
	e := &sqlerr.Error{Code: sqlerr.TransactionResolutionUnknown,
		Message: "the outcome of the commit is unknown: the connection to the catalog database was lost",
		Err:     fmt.Errorf("%w: %w", ErrCommitOutcomeUnknown, cause)}
	if len(detail) > 0 {
		e.Detail = strings.Join(detail, "; ") + "."
		e.Hint = "Once the catalog is back, lakesoul.history('<table>') lists each version's commit_ids: a commit id listed there committed, one listed nowhere did not."
	}
	return e
}

// CommitRetryWindow bounds how long a commit keeps re-sending itself after a
// connection-level failure (long enough for a catalog restart).
var CommitRetryWindow = 60 * time.Second

// retryCommit runs call, re-running it after connection-level failures.
// Invariant: call must be idempotent (it is: lakesoul.commit and
// lakesoul.commit_many recognise commit ids they already committed;
// CommitCompaction's call looks its commit ids up before re-sending).
//   - A failure before anything was sent is retried while ctx lives and
//     otherwise returned: nothing was committed.
//   - A failure after the call was sent (connection lost, server shutting
//     down, ctx ended mid-call) is ambiguous: retryCommit re-sends the call,
//     detached from ctx, until it gets a definite answer or the window ends.
//   - A SQL error from the commit itself (conflict 40001, bad input, …) is
//     definite and returned as is.
//
// refs are what call commits, named in the error when the outcome stays
// unknown (OutcomeUnknown) and, in a held transaction, in its COMMIT's.
func (c *Catalog) retryCommit(ctx context.Context, refs []CommitRef, call func(context.Context) (map[string]int, error)) (out map[string]int, err error) {
	out, err = call(ctx)
	if c.pinned != nil {
		if err == nil && c.held != nil {
			c.held.refs = append(c.held.refs, refs...)
		}
		// In a held transaction (held.go): a failure lost the transaction,
		// so nothing was committed; its COMMIT decides the outcome (counted
		// there). A conflict is the commit's answer, counted now.
		if commitOutcome(err) == metrics.Conflict {
			metrics.Commit(metrics.Conflict)
		}
		return out, err
	}
	defer func() { metrics.Commit(commitOutcome(err)) }()
	if err == nil || !transient(err) {
		return out, err
	}
	if pgconn.SafeToRetry(err) && ctx.Err() != nil {
		return nil, err // never sent and the caller gave up: not committed
	}
	detached, cancel := context.WithTimeout(context.WithoutCancel(ctx), CommitRetryWindow)
	defer cancel()
	backoff := 20 * time.Millisecond
	for {
		select {
		case <-detached.Done():
			return nil, OutcomeUnknown(refs, err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
		metrics.CommitRetry()
		out, err = call(detached)
		if err == nil || !transient(err) {
			return out, err
		}
	}
}

// commitOutcome classifies a commit's result for the metrics.
func commitOutcome(err error) string {
	var pe *pgconn.PgError
	switch {
	case err == nil:
		return metrics.Committed
	case errors.As(err, &pe) && pe.Code == "40001":
		return metrics.Conflict
	}
	return metrics.Failed
}

// transient reports whether err is a connection-level failure rather than an
// answer of the server: no SQLSTATE, or a connection-exception (08xxx) or
// shutdown (57P01-57P03) one.
func transient(err error) bool {
	var de *definiteError
	if errors.As(err, &de) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	return true
}

// definiteError marks a client-side failure that retrying cannot change
// (decoding a result row).
type definiteError struct{ err error }

func (e *definiteError) Error() string { return e.err.Error() }
func (e *definiteError) Unwrap() error { return e.err }

// afterConnect prepares each catalog connection. On PostgreSQL 14 and later it
// sets client_connection_check_interval, so a backend whose client died (a
// writer killed while its commit waits for a partition lock) notices within a
// second and rolls back instead of committing for nobody; either way the
// commit is atomic, this only makes the outcome of such a crash "not
// committed" rather than "committed later".
func afterConnect(ctx context.Context, conn *pgx.Conn) error {
	v := conn.PgConn().ParameterStatus("server_version")
	major, _ := strconv.Atoi(strings.SplitN(strings.SplitN(v, ".", 2)[0], " ", 2)[0])
	if major < 14 {
		return nil
	}
	_, err := conn.Exec(ctx, "SET client_connection_check_interval = 1000")
	return err
}

package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// ErrClaimLost is returned when a compaction's claim was taken over (its
// lease ran out) before it could commit; nothing was committed.
var ErrClaimLost = errors.New("compaction: the job's claim was lost")

// claimLostCode is the SQLSTATE lakesoul.compaction_commit raises for a
// token that no longer holds its job.
const claimLostCode = "LSC01"

type jsonFileOp struct {
	Path          string `json:"path"`
	FileOp        string `json:"file_op"`
	Size          int64  `json:"size"`
	FileExistCols string `json:"file_exist_cols"`
}

type jsonPartition struct {
	PartitionDesc string       `json:"partition_desc"`
	CommitID      string       `json:"commit_id"`
	FileOps       []jsonFileOp `json:"file_ops"`
	ReadVersion   *int         `json:"read_version,omitempty"`
}

type jsonDiscard struct {
	PartitionDesc string `json:"partition_desc"`
	Path          string `json:"path"`
}

// commit runs lakesoul.compaction_commit: the CompactionCommit of parts,
// the discarded inputs of every partition that committed, the new bucket
// count (bucketNum > 0) and the end of the job (token), in one transaction,
// consuming the write intent the files were written under.
// It returns the version of each partition that committed (a partition
// missing from the map was dropped, §2.4).
//
// A failure after the call was sent (connection lost, ctx ended mid-call)
// leaves the outcome open; detached from ctx, the outcome is then looked up
// (the commit rows exist only if the transaction committed) or the call
// repeated (it is idempotent per commit id), until it is known or
// catalog.CommitRetryWindow passed (then the error wraps
// catalog.ErrCommitOutcomeUnknown and the caller must keep its files).
func (c *compactor) commit(ctx context.Context, token *uuid.UUID, intent *catalog.WriteIntent, tableID string, parts []catalog.PartitionCommit,
	discards map[string][]string, bucketNum int) (map[string]int, error) {
	out, err := c.commitOnce(ctx, token, intent, tableID, parts, discards, bucketNum)
	if err == nil {
		intent.Consumed()
		c.cat.NotifyCommitted(tableID, out)
	}
	return out, err
}

func (c *compactor) commitOnce(ctx context.Context, token *uuid.UUID, intent *catalog.WriteIntent, tableID string, parts []catalog.PartitionCommit,
	discards map[string][]string, bucketNum int) (map[string]int, error) {
	payload := make([]jsonPartition, len(parts))
	var disc []jsonDiscard
	ids := make([]uuid.UUID, len(parts))
	for i, p := range parts {
		ops := make([]jsonFileOp, len(p.Ops))
		for j, o := range p.Ops {
			ops[j] = jsonFileOp{Path: o.Path, FileOp: o.Op, Size: o.Size, FileExistCols: strings.Join(o.ExistCols, ",")}
		}
		payload[i] = jsonPartition{PartitionDesc: p.Desc, CommitID: p.CommitID.String(), FileOps: ops, ReadVersion: p.ReadVersion}
		ids[i] = p.CommitID
		for _, d := range discards[p.Desc] {
			disc = append(disc, jsonDiscard{PartitionDesc: p.Desc, Path: d})
		}
	}
	pj, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	if disc == nil {
		disc = []jsonDiscard{}
	}
	dj, err := json.Marshal(disc)
	if err != nil {
		return nil, err
	}
	var bn any
	if bucketNum > 0 {
		bn = bucketNum
	}
	intentID, intentToken := catalog.IntentArgs(intent)
	call := func(ctx context.Context) (map[string]int, error) {
		rows, err := c.cat.Pool().Query(ctx,
			"SELECT partition_desc, version FROM lakesoul.compaction_commit($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7)",
			token, tableID, string(pj), string(dj), bn, intentID, intentToken)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var desc string
			var v *int32
			if err := rows.Scan(&desc, &v); err != nil {
				return nil, err
			}
			if v != nil {
				out[desc] = int(*v)
			}
		}
		return out, rows.Err()
	}
	out, err := call(ctx)
	if err == nil {
		return out, nil
	}
	if definite(err) {
		return nil, mapCommitError(err)
	}
	if pgconn.SafeToRetry(err) && ctx.Err() != nil {
		return nil, err // never sent, and the caller gave up: not committed
	}
	detached, cancel := context.WithTimeout(context.WithoutCancel(ctx), catalog.CommitRetryWindow)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		select {
		case <-detached.Done():
			return nil, catalog.OutcomeUnknown([]catalog.CommitRef{{TableID: tableID, CommitIDs: ids}}, err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
		// Did the transaction commit? Its commit rows exist only if it did.
		var landed bool
		if qerr := c.cat.Pool().QueryRow(detached,
			"SELECT EXISTS (SELECT 1 FROM public.data_commit_info WHERE table_id = $1 AND commit_id = ANY ($2))",
			tableID, ids).Scan(&landed); qerr != nil {
			err = qerr
			continue
		}
		if landed {
			return c.versionsOf(detached, tableID, parts)
		}
		out, err = call(detached)
		if err == nil {
			return out, nil
		}
		if definite(err) {
			return nil, mapCommitError(err)
		}
	}
}

// versionsOf finds the version each partition's commit id first appears in.
func (c *compactor) versionsOf(ctx context.Context, tableID string, parts []catalog.PartitionCommit) (map[string]int, error) {
	out := map[string]int{}
	for _, p := range parts {
		var v *int32
		if err := c.cat.Pool().QueryRow(ctx,
			"SELECT min(version) FROM public.partition_info WHERE table_id = $1 AND partition_desc = $2 AND $3 = ANY (snapshot)",
			tableID, p.Desc, p.CommitID).Scan(&v); err != nil {
			return nil, err
		}
		if v != nil {
			out[p.Desc] = int(*v)
		}
	}
	return out, nil
}

func mapCommitError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == claimLostCode {
		return fmt.Errorf("%w: %s", ErrClaimLost, pe.Message)
	}
	return err
}

// definite reports whether err is the server's answer to the commit (a SQL
// error other than a connection or shutdown one), so nothing was committed.
// Anything else — a lost connection, the caller's context ending while the
// call was in flight — leaves the outcome open.
func definite(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return !strings.HasPrefix(pe.Code, "08") && pe.Code != "57P01" && pe.Code != "57P02" && pe.Code != "57P03" &&
			pe.Code != "57014" // query_canceled: our context ended mid-call
	}
	return false
}

// recordOutput notes prefix (if any) in the job row before anything is
// written there, and forgets the prefixes of dead attempts the caller
// deleted. Without a token (no queue) it does nothing.
func (c *compactor) recordOutput(ctx context.Context, token *uuid.UUID, prefix string, forget []string) error {
	if token == nil {
		return nil
	}
	var add any
	if prefix != "" {
		add = prefix
	}
	var ok bool
	if err := c.cat.Pool().QueryRow(ctx, "SELECT lakesoul.compaction_record_output($1, $2, $3)", *token, add, forget).Scan(&ok); err != nil {
		return err
	}
	if !ok {
		return ErrClaimLost
	}
	return nil
}

// job is a claimed compaction job.
type job struct {
	tableID, desc string
	token         uuid.UUID
	attempts      int
	reason        string
	outputs       []string
}

// claim takes the next ready job; ok is false when there is none.
func (c *compactor) claim(ctx context.Context) (j job, ok bool, err error) {
	var attempts int32
	err = c.cat.Pool().QueryRow(ctx,
		"SELECT table_id, partition_desc, claim_token, attempts, reason, outputs FROM lakesoul.compaction_claim($1, $2)",
		c.opt.WorkerID, c.opt.Lease.Milliseconds()).Scan(&j.tableID, &j.desc, &j.token, &attempts, &j.reason, &j.outputs)
	if err != nil {
		if isNoRows(err) {
			return j, false, nil
		}
		return j, false, err
	}
	j.attempts = int(attempts)
	return j, true, nil
}

// claimPartition claims one partition's job for an on-demand compaction,
// waiting while another claim holds it.
func (c *compactor) claimPartition(ctx context.Context, tableID, desc string) (job, error) {
	wait := 50 * time.Millisecond
	for {
		j := job{tableID: tableID, desc: desc, reason: "manual"}
		err := c.cat.Pool().QueryRow(ctx,
			"SELECT claim_token, outputs FROM lakesoul.compaction_claim_partition($1, $2, $3, $4)",
			tableID, desc, c.opt.WorkerID, c.opt.Lease.Milliseconds()).Scan(&j.token, &j.outputs)
		if err == nil {
			return j, nil
		}
		if !isNoRows(err) {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// renew extends the claim; false when it was lost.
func (c *compactor) renew(ctx context.Context, token uuid.UUID) (bool, error) {
	var ok bool
	err := c.cat.Pool().QueryRow(ctx, "SELECT lakesoul.compaction_renew($1, $2)", token, c.opt.Lease.Milliseconds()).Scan(&ok)
	return ok, err
}

// release gives a claim back: done (jobErr nil) or to be retried after
// retry. drop makes a failed on-demand job not linger as a retry unless it
// left outputs to clean up.
func (c *compactor) release(ctx context.Context, token uuid.UUID, jobErr error, retry time.Duration, drop bool) error {
	var msg any
	if jobErr != nil {
		msg = jobErr.Error()
	}
	_, err := c.cat.Pool().Exec(context.WithoutCancel(ctx), "SELECT lakesoul.compaction_release($1, $2, $3, $4)",
		token, msg, retry.Milliseconds(), drop)
	return err
}

// cleanOutputs deletes the output prefixes of earlier (dead) attempts on
// table t and returns those it deleted. Only prefixes inside t's directory
// are deleted (the store refuses others); with t nil (the table is gone,
// and DROP removed its directory) nothing is.
func (c *compactor) cleanOutputs(ctx context.Context, t *catalog.Table, prefixes []string) []string {
	if t == nil || c.checkTable(t) != nil {
		return nil
	}
	var done []string
	for _, p := range prefixes {
		if err := c.store.DeletePrefix(context.WithoutCancel(ctx), t.Path, p); err != nil {
			c.opt.Logger.Warn("compaction: could not delete a dead attempt's output", "prefix", p, "err", err)
			continue
		}
		done = append(done, p)
	}
	return done
}

func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }

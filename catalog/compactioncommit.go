package catalog

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
)

// CompactionClaimLostCode is the SQLSTATE lakesoul.compaction_commit raises
// when the job's claim token no longer holds its job (its lease ran out and
// another worker took it): nothing was committed.
const CompactionClaimLostCode = "LSC01"

type jsonDiscard struct {
	PartitionDesc string `json:"partition_desc"`
	Path          string `json:"path"`
}

// CommitCompaction commits a compaction through lakesoul.compaction_commit,
// as the catalog owner: the CompactionCommit of parts, the discarded input
// files (discards, by partition) of every partition that committed, the new
// bucket count (bucketNum > 0) and the end of the job (token; nil without
// the queue), in one transaction consuming intent. It returns the version
// each partition got (a partition missing from the map was dropped, LakeSoul
// §2.4).
//
// It takes Commit's path (retryCommit): the same retry after connection
// failures, the same error classification and the same metrics. Once sent,
// a commit whose claim token ended with it cannot be re-sent (the token is
// gone and the call would answer LSC01), so each re-send first looks the
// commit ids up: rows for them exist only if the transaction committed.
// A re-send answered LSC01 looks them up again: the first send's
// transaction may have committed after that look-up, while the re-send
// waited for the job row it held.
func (c *Catalog) CommitCompaction(ctx context.Context, token *uuid.UUID, intent *WriteIntent, tableID string,
	parts []PartitionCommit, discards map[string][]string, bucketNum int) (map[string]int, error) {
	payload := make([]jsonPartition, len(parts))
	disc := []jsonDiscard{}
	for i, p := range parts {
		payload[i] = partitionJSON(p)
		for _, d := range discards[p.Desc] {
			disc = append(disc, jsonDiscard{PartitionDesc: p.Desc, Path: d})
		}
	}
	pj, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	dj, err := json.Marshal(disc)
	if err != nil {
		return nil, err
	}
	var bn any
	if bucketNum > 0 {
		bn = bucketNum
	}
	intentID, intentToken := intentArgs(intent)
	owner := c.As("")
	refs := refsOf([]TableCommit{{TableID: tableID, Parts: parts}})
	sent := false
	out, err := owner.retryCommit(ctx, refs, func(ctx context.Context) (map[string]int, error) {
		if sent {
			out, landed, err := owner.landedVersions(ctx, tableID, parts)
			if err != nil || landed {
				return out, err
			}
		}
		resent := sent
		sent = true
		out := make(map[string]int, len(parts))
		err := owner.run(ctx, func(q querier) error {
			clear(out)
			rows, err := q.Query(ctx, "SELECT partition_desc, version FROM lakesoul.compaction_commit($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7)",
				token, tableID, string(pj), string(dj), bn, intentID, intentToken)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				if err := scanVersionRow(rows, out); err != nil {
					return &definiteError{err}
				}
			}
			return rows.Err()
		})
		if err != nil && resent && isClaimLost(err) {
			// The token is gone: the first send may have ended it by
			// committing after the look-up above (its transaction held the
			// job row this call waited on). Only the commit rows tell.
			out, landed, lerr := owner.landedVersions(ctx, tableID, parts)
			if lerr != nil || landed {
				return out, lerr
			}
		}
		if err != nil {
			return nil, err
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	intent.Consumed()
	c.NotifyCommitted(tableID, out)
	return out, nil
}

// landedVersions reports whether the commits of parts landed (their commit
// rows exist only if the transaction committed) and, if so, the version each
// partition's commit first appears in. A failed look-up is a lost
// connection's (lookupError): the outcome stays open, and retryCommit asks
// again.
func (c *Catalog) landedVersions(ctx context.Context, tableID string, parts []PartitionCommit) (map[string]int, bool, error) {
	ids := make([]uuid.UUID, len(parts))
	for i, p := range parts {
		ids[i] = p.CommitID
	}
	var landed bool
	out := map[string]int{}
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM public.data_commit_info WHERE table_id = $1 AND commit_id = ANY ($2))",
			tableID, ids).Scan(&landed)
	})
	if err != nil || !landed {
		return nil, false, lookupFailed(err)
	}
	for _, p := range parts {
		var v *int32
		err := c.run(ctx, func(q querier) error {
			return q.QueryRow(ctx,
				"SELECT min(version) FROM public.partition_info WHERE table_id = $1 AND partition_desc = $2 AND $3 = ANY (snapshot)",
				tableID, p.Desc, p.CommitID).Scan(&v)
		})
		if err != nil {
			return nil, false, lookupFailed(err)
		}
		if v != nil {
			out[p.Desc] = int(*v)
		}
	}
	return out, true, nil
}

// isClaimLost reports whether err is lakesoul.compaction_commit's LSC01.
func isClaimLost(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == CompactionClaimLostCode
}

// lookupError is a failed look-up of a commit's outcome. It hides the
// failure's SQLSTATE from transient on purpose: whatever the look-up's
// error, it is no answer to the commit, whose outcome stays open.
type lookupError struct{ err error }

func (e *lookupError) Error() string { return "looking up the commit's outcome: " + e.err.Error() }

func lookupFailed(err error) error {
	if err == nil {
		return nil
	}
	return &lookupError{err}
}

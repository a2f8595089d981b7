package catalog

import (
	"context"
	"encoding/json"
	"fmt"
)

// TableCommit is one table's commit within CommitMany.
type TableCommit struct {
	TableID string
	Op      string
	Parts   []PartitionCommit
}

type jsonTableCommit struct {
	TableID    string          `json:"table_id"`
	CommitOp   string          `json:"commit_op"`
	Partitions []jsonPartition `json:"partitions"`
}

// CommitMany commits the file operations of several tables atomically, in
// one catalog transaction (lakesoul.commit_many): all become visible or none.
// Commits apply in order; each is what Commit does for its table. Errors mean
// what Commit's do: nil is committed exactly once, an error wrapping
// ErrCommitOutcomeUnknown may have committed, any other is not committed.
// intent is the write intent of the block's files, as for Commit.
func (c *Catalog) CommitMany(ctx context.Context, intent *WriteIntent, commits []TableCommit) error {
	return c.CommitManyRead(ctx, intent, commits, nil)
}

// ReadCheck is a partition a transaction read at Version without writing
// it (CommitManyRead).
type ReadCheck struct {
	TableID, Desc string
	Version       int
}

type jsonReadCheck struct {
	TableID       string `json:"table_id"`
	PartitionDesc string `json:"partition_desc"`
	ExpectVersion int    `json:"expect_version"`
}

// CommitManyRead is CommitMany for a transaction that must also find the
// partitions reads still at the versions it read: no commit to them lands
// while it commits, and it fails with a moved partition (AsPartitionMoved)
// unless each is.
func (c *Catalog) CommitManyRead(ctx context.Context, intent *WriteIntent, commits []TableCommit, reads []ReadCheck) error {
	b, err := commitsJSON(commits)
	if err != nil {
		return err
	}
	var readsArg *string
	if len(reads) > 0 {
		rs := make([]jsonReadCheck, len(reads))
		for i, r := range reads {
			rs[i] = jsonReadCheck{TableID: r.TableID, PartitionDesc: r.Desc, ExpectVersion: r.Version}
		}
		rb, err := json.Marshal(rs)
		if err != nil {
			return err
		}
		str := string(rb)
		readsArg = &str
	}
	intentID, intentToken := intentArgs(intent)
	var versions map[string]map[string]int
	_, err = c.retryCommit(ctx, refsOf(commits), func(ctx context.Context) (map[string]int, error) {
		versions = map[string]map[string]int{}
		err := c.run(ctx, func(q querier) error {
			rows, err := q.Query(ctx, "SELECT o_table_id, o_partition_desc, o_version FROM lakesoul.commit_many($1::jsonb, $2, $3, $4::jsonb)",
				string(b), intentID, intentToken, readsArg)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var table, desc string
				var v *int32
				if err := rows.Scan(&table, &desc, &v); err != nil {
					return &definiteError{err}
				}
				if v != nil {
					if versions[table] == nil {
						versions[table] = map[string]int{}
					}
					versions[table][desc] = int(*v)
				}
			}
			return rows.Err()
		})
		if err != nil {
			return nil, fmt.Errorf("commit of %d tables: %w", len(commits), err)
		}
		return nil, nil
	})
	if err != nil {
		return err
	}
	intent.Consumed()
	for table, vs := range versions {
		c.NotifyCommitted(table, vs)
	}
	return nil
}

// commitsJSON is lakesoul.commit_many's argument for commits.
func commitsJSON(commits []TableCommit) ([]byte, error) {
	payload := make([]jsonTableCommit, len(commits))
	for i, tc := range commits {
		parts := make([]jsonPartition, len(tc.Parts))
		for j, p := range tc.Parts {
			parts[j] = partitionJSON(p)
		}
		payload[i] = jsonTableCommit{TableID: tc.TableID, CommitOp: tc.Op, Partitions: parts}
	}
	return json.Marshal(payload)
}

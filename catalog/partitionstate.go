package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
)

// PartitionState is the latest version of a partition: its number, the
// operation that made it and how many commits its snapshot lists.
type PartitionState struct {
	Version  int
	CommitOp string
	Commits  int
}

// LatestPartitionState returns the latest version of partition desc of the
// table (found is false when the partition has none). Called through a
// handle from InSnapshot, it reads the same snapshot as the handle's
// LiveFiles, so the two agree on the version whatever commits land.
func (c *Catalog) LatestPartitionState(ctx context.Context, tableID, desc string) (st PartitionState, found bool, err error) {
	err = c.run(ctx, func(q querier) error {
		var ver, commits int32
		err := q.QueryRow(ctx, "SELECT version, commit_op, commits FROM lakesoul.compaction_partition_state($1, $2)", tableID, desc).
			Scan(&ver, &st.CommitOp, &commits)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		st.Version, st.Commits, found = int(ver), int(commits), true
		return nil
	})
	return st, found, err
}

package engine

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CALL lakesoul.compact('s.t' [, partition => 'd=…'] [, new_bucket_num => N])
// compacts now, in this session (LakeSoul's manual compaction, §6.1): every
// partition of the table, or the one named, with the table's compaction mode
// (table option compaction.mode: full or leveled). Arguments are resolved on
// the catalog as the session's role by lakesoul.compact_targets (so a table
// the role cannot see does not exist, and the session's lake search path
// applies); the rewriting runs in this process. Each partition's job is
// claimed in the catalog first, so a worker never compacts it at the same
// time. new_bucket_num re-buckets the whole table in one commit.
//
// Result: one row per partition — partition, status (compacted, skipped,
// dropped), read_version, version (NULL unless compacted), files_in,
// files_out. Like the other maintenance calls it runs outside transaction
// blocks only (25001).
func (s *Session) planCompact(ctx context.Context, fc *pg_query.FuncCall, paramOIDs []uint32) (pgwire.Statement, error) {
	if err := s.preventTransactionBlockAtPlan("CALL lakesoul.compact"); err != nil {
		return nil, err
	}
	call, err := s.prepareCall(ctx, `SELECT c.table_id, c.partition_desc, c.bucket_num FROM lakesoul.compact_targets(%s) c`, fc, paramOIDs)
	if err != nil {
		return nil, err
	}
	col := func(name string, oid uint32, size int16) pgwire.Column {
		return pgwire.Column{Name: name, TypeOID: oid, TypeSize: size, TypeModifier: -1}
	}
	cols := []pgwire.Column{col("partition", schema.OIDText, -1), col("status", schema.OIDText, -1),
		col("read_version", schema.OIDInt4, 4), col("version", schema.OIDInt4, 4),
		col("files_in", schema.OIDInt8, 8), col("files_out", schema.OIDInt8, 8)}
	return &funcStmt{tag: "CALL", cols: cols, params: call.args.clientParamOIDs(), run: func(ctx context.Context, args []any) (string, [][]any, error) {
		if err := s.preventTransactionBlock(ctx, "CALL lakesoul.compact"); err != nil {
			return "", nil, err
		}
		targets, err := s.runCall(ctx, call, args, callProc{})
		if err != nil {
			return "", nil, err
		}
		rows, err := s.compactTargets(ctx, targets)
		return "CALL", rows, err
	}}, nil
}

// compactTargets compacts the (table_id, partition_desc, bucket_num) rows
// lakesoul.compact_targets returned.
func (s *Session) compactTargets(ctx context.Context, targets [][]any) ([][]any, error) {
	if len(targets) == 0 {
		return nil, nil
	}
	id, _ := targets[0][0].(string)
	t, err := s.cat.NamedTableByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.e.checkTableDir(t); err != nil {
		return nil, err
	}
	opt := compaction.Options{Logger: s.e.log, Warehouse: s.e.cfg.Warehouse}
	var results []compaction.Result
	if n, ok := asInt(targets[0][2]); ok {
		if !t.HasPK() {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "new_bucket_num needs a table with a PRIMARY KEY")
		}
		results, err = compaction.Rebucket(ctx, s.cat, s.e.store, t, n, opt)
		if err != nil {
			return nil, err
		}
	} else {
		for _, r := range targets {
			desc, _ := r[1].(string)
			res, err := compaction.CompactPartition(ctx, s.cat, s.e.store, t, desc, opt)
			if err != nil {
				return nil, fmt.Errorf("compact partition %s: %w", desc, err)
			}
			results = append(results, res)
		}
	}
	out := make([][]any, 0, len(results))
	for _, r := range results {
		if r.Status == compaction.Compacted {
			s.e.rebuildVectorIndexes(ctx, t, r.Partition, s.user) // vectorindex.go
		}
		var version any
		if r.Version >= 0 {
			version = int32(r.Version)
		}
		var read any
		if r.ReadVersion >= 0 {
			read = int32(r.ReadVersion)
		}
		out = append(out, []any{r.Partition, string(r.Status), read, version, int64(r.FilesIn), int64(r.FilesOut)})
	}
	return out, nil
}

func asInt(v any) (int, bool) {
	switch n := v.(type) {
	case int32:
		return int(n), true
	case int64:
		return int(n), true
	case int:
		return n, true
	}
	return 0, false
}

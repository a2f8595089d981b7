package engine

import (
	"context"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT] inside a
// transaction block.
//
// A savepoint remembers the block's staged writes (its small buffered writes
// are written out first, so every write before the savepoint is a staged
// file), and, when the block holds a catalog transaction for DDL, a savepoint
// of that transaction. ROLLBACK TO deletes the files staged since, restores
// the staged writes, rolls the catalog transaction back to its savepoint
// (or ends it, when the block's first DDL came later) and makes a failed
// block usable again, as in PostgreSQL. Files a later rewrite superseded are
// kept while a savepoint may bring them back, and deleted when the block ends
// without them.

type savepoint struct {
	name   string
	staged []stagedWrite
	wrote  bool
	// ddl: the block held its catalog transaction already; seq numbers its
	// savepoint there, dropped how many dropped directories it had.
	ddl     bool
	seq     int
	dropped int
	// settings are the run-time settings (txsettings.go); notifies,
	// listens and droppedTemps how many NOTIFYs, LISTEN/UNLISTENs and
	// dropped temporary tables the block had.
	settings                        settingsSavepoint
	notifies, listens, droppedTemps int
	// checks and reads are how many read-modify-write checks and
	// SERIALIZABLE reads the block had (rmw.go, serializable.go).
	checks, reads int
}

// cloneStaged copies staged writes deeply (they are merged into in place).
func cloneStaged(ws []stagedWrite) []stagedWrite {
	out := make([]stagedWrite, len(ws))
	for i, w := range ws {
		out[i] = stagedWrite{table: w.table, op: w.op, parts: make([]catalog.PartitionCommit, len(w.parts))}
		for j, p := range w.parts {
			p.Ops = slices.Clone(p.Ops)
			out[i].parts[j] = p
		}
	}
	return out
}

// stagedPaths are the files staged writes add.
func stagedPaths(ws []stagedWrite) map[string]bool {
	m := map[string]bool{}
	for _, w := range ws {
		for _, p := range w.parts {
			for _, op := range p.Ops {
				if op.Op == "add" {
					m[op.Path] = true
				}
			}
		}
	}
	return m
}

func (s *Session) planSavepoint(n *pg_query.TransactionStmt) (pgwire.Statement, error) {
	tag := map[pg_query.TransactionStmtKind]string{
		pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:   "SAVEPOINT",
		pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:     "RELEASE",
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO: "ROLLBACK",
	}[n.Kind]
	shown := map[pg_query.TransactionStmtKind]string{
		pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:   "SAVEPOINT",
		pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:     "RELEASE SAVEPOINT",
		pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO: "ROLLBACK TO SAVEPOINT",
	}[n.Kind]
	name := n.SavepointName
	return &funcStmt{tag: tag, run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if !s.explicitBlock() {
			// Also inside an implicit transaction, as PostgreSQL.
			return "", nil, sqlerr.New(sqlerr.NoActiveSQLTransaction, "%s can only be used in transaction blocks", shown)
		}
		var err error
		switch n.Kind {
		case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
			err = s.setSavepoint(ctx, name)
		case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
			err = s.releaseSavepoint(ctx, name)
		default:
			err = s.rollbackToSavepoint(ctx, name)
		}
		return tag, nil, err
	}}, nil
}

func (s *Session) setSavepoint(ctx context.Context, name string) error {
	if err := s.flushAllBuffered(ctx); err != nil {
		return err
	}
	s.spSeq++
	sp := savepoint{name: name, staged: cloneStaged(s.staged), wrote: s.wroteInBlock, seq: s.spSeq,
		settings: s.saveSettings(), notifies: len(s.blockNotifies), listens: len(s.blockListens),
		droppedTemps: len(s.droppedTemps), checks: len(s.rmwChecks), reads: len(s.readSet)}
	if s.ddlTx != nil {
		if err := s.ddlTx.held.Savepoint(ctx, sp.seq); err != nil {
			return err
		}
		sp.ddl, sp.dropped = true, len(s.ddlTx.dropped)
	}
	s.savepoints = append(s.savepoints, sp)
	return nil
}

// findSavepoint is the index of the newest savepoint called name.
func (s *Session) findSavepoint(name string) (int, error) {
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if s.savepoints[i].name == name {
			return i, nil
		}
	}
	return 0, sqlerr.New(sqlerr.InvalidSavepointSpec, "savepoint %q does not exist", name)
}

func (s *Session) releaseSavepoint(ctx context.Context, name string) error {
	i, err := s.findSavepoint(name)
	if err != nil {
		return err
	}
	sp := s.savepoints[i]
	s.savepoints = s.savepoints[:i]
	if s.advisory != nil {
		if err := s.advisory.Release(ctx, sp.seq); err != nil { // advisory.go
			return err
		}
	}
	if sp.ddl && s.ddlTx != nil {
		return s.ddlTx.held.Release(ctx, sp.seq)
	}
	return nil
}

func (s *Session) rollbackToSavepoint(ctx context.Context, name string) error {
	i, err := s.findSavepoint(name)
	if err != nil {
		return err
	}
	sp := s.savepoints[i]
	s.savepoints = s.savepoints[:i+1] // the savepoint stays, later ones go
	if s.advisory != nil {
		// Transaction locks taken after it are released (advisory.go).
		if err := s.advisory.RollbackTo(ctx, sp.seq); err != nil {
			return err
		}
	}
	s.dropBuffered() // all buffered rows came after it
	keep := stagedPaths(sp.staged)
	var gone []catalog.PartitionCommit
	for _, w := range s.staged {
		for _, p := range w.parts {
			var ops []catalog.FileOp
			for _, op := range p.Ops {
				if op.Op == "add" && !keep[op.Path] {
					ops = append(ops, op)
				}
			}
			gone = append(gone, catalog.PartitionCommit{Desc: p.Desc, Ops: ops})
		}
	}
	s.deleteFiles(ctx, gone)
	s.staged = cloneStaged(sp.staged)
	s.rmwChecks = s.rmwChecks[:min(sp.checks, len(s.rmwChecks))]
	// (What the statements after it read stays: PostgreSQL's predicate
	// locks survive ROLLBACK TO too.)
	s.wroteInBlock = sp.wrote
	s.failed = false
	s.restoreSettings(sp.settings) // txsettings.go
	s.blockNotifies = s.blockNotifies[:sp.notifies]
	s.blockListens = s.blockListens[:sp.listens]
	s.undropTemps(ctx, sp.droppedTemps) // temptable.go
	switch {
	case sp.ddl && s.ddlTx != nil:
		s.ddlTx.dropped = s.ddlTx.dropped[:sp.dropped]
		defer s.e.ddlGen.Add(1) // plans made since check again (replan.go, checkPlanTables)
		return s.ddlTx.held.RollbackTo(ctx, sp.seq)
	case s.ddlTx != nil:
		// The block's DDL all came after the savepoint.
		if err := s.endBlockDDL(ctx, false, nil); err != nil {
			return err
		}
		for j := range s.savepoints {
			s.savepoints[j].ddl = false
		}
	}
	return nil
}

// endSavepoints forgets the block's savepoints at its end and deletes the
// superseded files that what was committed (kept) does not name.
func (s *Session) endSavepoints(ctx context.Context, kept []stagedWrite) {
	s.savepoints = nil
	if len(s.superseded) == 0 {
		return
	}
	live := stagedPaths(kept)
	var gone []catalog.PartitionCommit
	for _, p := range s.superseded {
		var ops []catalog.FileOp
		for _, op := range p.Ops {
			if !live[op.Path] {
				ops = append(ops, op)
			}
		}
		gone = append(gone, catalog.PartitionCommit{Desc: p.Desc, Ops: ops})
	}
	s.superseded = nil
	s.deleteFiles(ctx, gone)
}

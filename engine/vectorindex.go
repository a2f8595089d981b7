package engine

import (
	"context"
	"errors"
	"strconv"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/faults"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
	"github.com/lakesoul-go/lakesoul/vector"
)

// CREATE INDEX … USING ivfflat (col opclass) WITH (lists = N) and DROP
// INDEX on lake tables. CREATE INDEX validates and records the index
// (lakesoul.vector_index) and returns; its segments (one per partition ×
// bucket, vector/segment.go) are built in the background, and rebuilt by
// the compaction workers for partitions they rewrote. Until a
// unit has a segment it is searched exactly. Columns of more than
// vector.MaxIndexDims dimensions cannot be indexed (pgvector's bound).
//
// The builds of a server share one vector.Builder: a few at once, taken
// in turn by workspace. Each shows in pg_stat_activity as a backend of
// type "vector index build" (activity.go) that pg_cancel_backend stops,
// and stops when its index or table is dropped or the server shuts down.

// vectorIndexes runs the engine's background index builds.
type vectorIndexes struct {
	builder *vector.Builder
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

func newVectorIndexes(cat *catalog.Catalog, e *Engine) *vectorIndexes {
	ctx, cancel := context.WithCancel(context.Background())
	return &vectorIndexes{builder: &vector.Builder{Cat: cat, Store: e.store, Log: e.log, Slots: vector.NewBuildSlots(0)},
		ctx: ctx, cancel: cancel}
}

// close stops the builds and waits for them.
func (v *vectorIndexes) close() {
	v.cancel()
	v.wg.Wait()
}

// buildVectorIndex builds the missing or stale segments of t's index ix
// (of the partitions descs, all when nil) in the background, for user.
func (e *Engine) buildVectorIndex(t *catalog.Table, ix catalog.VectorIndex, descs []string, user string) {
	v := e.vectors
	v.wg.Add(1)
	safego.Go(func() {
		defer v.wg.Done()
		var n int
		// A panic fails this build alone, like an error.
		err := safego.Call(func() (err error) {
			faults.Point("vector.build", t.QualifiedName())
			n, err = v.builder.BuildTable(v.ctx, t, ix, descs, user)
			return err
		})
		switch {
		case errors.Is(err, vector.ErrBuildCanceled):
			e.log.Info("vector index build canceled", "table", t.QualifiedName(), "index", ix.Name, "segments", n)
		case err != nil && v.ctx.Err() == nil && !errors.Is(err, context.Canceled):
			e.log.Warn("vector index build failed", "table", t.QualifiedName(), "index", ix.Name, "err", err)
		case err != nil:
			e.log.Info("vector index build stopped", "table", t.QualifiedName(), "index", ix.Name, "segments", n, "err", err)
		default:
			e.log.Info("vector index built", "table", t.QualifiedName(), "index", ix.Name, "segments", n)
		}
	})
}

// rebuildVectorIndexes rebuilds, in the background, the segments of t's
// vector indexes for partition desc, which a compaction rewrote.
func (e *Engine) rebuildVectorIndexes(ctx context.Context, t *catalog.Table, desc, user string) {
	ixs, err := e.cat.VectorIndexes(ctx, t.ID)
	if err != nil {
		e.log.Warn("vector indexes: cannot list", "table", t.QualifiedName(), "err", err)
		return
	}
	for _, ix := range ixs {
		e.buildVectorIndex(t, ix, []string{desc}, user)
	}
}

// RebuildVectorIndexes rebuilds the stale segments of partition desc of
// table tableID's vector indexes, after a compaction of the server's
// workers rewrote it (compaction.Config.AfterCompaction): on the engine's
// builder, so these builds share its slots and show in pg_stat_activity.
func (e *Engine) RebuildVectorIndexes(ctx context.Context, tableID, desc string) error {
	return e.vectors.builder.Rebuild(ctx, tableID, desc)
}

// planVectorIndex plans CREATE INDEX … USING ivfflat (index.go routes it).
func (s *Session) planVectorIndex(st *pg_query.IndexStmt, method string) (pgwire.Statement, error) {
	switch {
	case st.Unique || st.WhereClause != nil || len(st.IndexIncludingParams) > 0 || st.Concurrent:
		return nil, sqlerr.Unsupported("UNIQUE, partial, INCLUDE or CONCURRENTLY vector indexes", "CREATE INDEX name ON table USING ivfflat (column opclass) WITH (lists = N)")
	case len(st.IndexParams) != 1 || st.IndexParams[0].GetIndexElem().GetName() == "":
		return nil, sqlerr.Unsupported("a vector index of several columns or of an expression", "one vector column")
	case st.Idxname == "":
		return nil, sqlerr.New(sqlerr.SyntaxError, "a vector index needs a name")
	}
	elem := st.IndexParams[0].GetIndexElem()
	opclass := "vector_l2_ops"
	if len(elem.Opclass) > 0 {
		var parts []string
		for _, o := range elem.Opclass {
			parts = append(parts, o.GetString_().GetSval())
		}
		opclass = parts[len(parts)-1]
	}
	metric, ok := vector.MetricOfOpclass(opclass)
	if !ok && method != "hnsw" {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "operator class %q does not exist for access method \"ivfflat\"", opclass)
	}
	lists := 100 // pgvector's default
	for _, o := range st.Options {
		if method == "hnsw" {
			break // hnsw's own options (m, ef_construction); refused below
		}
		d := o.GetDefElem()
		if d.Defname != "lists" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "unrecognized parameter %q", d.Defname)
		}
		v, err := strconv.Atoi(defElemValue(d))
		if err != nil || v < 1 || v > 32768 {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "value %s out of bounds for option \"lists\"", defElemValue(d))
		}
		lists = v
	}
	return s.ddl("CREATE INDEX", func(ctx context.Context) error {
		t, err := s.resolveTable(ctx, st.Relation.Schemaname, st.Relation.Relname)
		if err != nil {
			return err
		}
		idx := t.Schema.FieldIndices(elem.Name)
		if len(idx) == 0 {
			return sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", elem.Name)
		}
		f := t.Schema.Field(idx[0])
		dims := schema.VectorDims(f)
		if dims == 0 {
			return sqlerr.New(sqlerr.DatatypeMismatch, "column %q is of type %s, not vector: operator class %q accepts only vectors",
				elem.Name, lakeFieldTypeName(f), opclass)
		}
		if dims > vector.MaxIndexDims { // pgvector's check and words, for both methods
			return sqlerr.New(sqlerr.ProgramLimitExceeded, "column cannot have more than %d dimensions for %s index", vector.MaxIndexDims, method)
		}
		if method == "hnsw" {
			return sqlerr.Unsupported("CREATE INDEX … USING hnsw", "CREATE INDEX … USING ivfflat (column vector_l2_ops|vector_cosine_ops|vector_ip_ops) WITH (lists = N)")
		}
		if !vector.IndexableKey(t) {
			return sqlerr.Unsupported("a vector index on a table without a one-column integer or text primary key",
				"tables with PRIMARY KEY (id) of type bigint, integer, smallint or text")
		}
		if err := s.checkIndexName(ctx, t.Namespace, st.Idxname); err != nil {
			if st.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateTable {
				return nil
			}
			return err
		}
		ix := catalog.VectorIndex{Name: st.Idxname, TableID: t.ID, Column: f.Name, Method: method, Metric: metric.String(), Lists: lists}
		if err := s.cat.CreateVectorIndex(ctx, ix); err != nil {
			if st.IfNotExists && sqlerr.Code(err) == sqlerr.DuplicateTable {
				return nil
			}
			return err
		}
		s.afterDDL(func() { s.e.buildVectorIndex(t, ix, nil, s.user) })
		return nil
	}), nil
}

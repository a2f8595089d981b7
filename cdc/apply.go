package cdc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/google/uuid"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// applier is one run of a subscription by the holder of its lease: the
// source tables it knows, the position the lake holds, the open batch.
// A run ends at the first error; the worker starts a new one from the
// catalog's state, so nothing a failed run held in memory survives it.
type applier struct {
	env   *Env
	sub   *catalog.Subscription
	token uuid.UUID
	// tables by source table name
	tables map[string]*tableState
	// position is the stored position ("" before the initial copy).
	position string
	// sourcePos is the newest source position seen (for lag_bytes).
	sourcePos string
	batch     *batch
	// committed is called with each position the lake committed (the
	// PostgreSQL source reports it to the slot).
	committed func(pos string)
}

func newApplier(env *Env, sub *catalog.Subscription, token uuid.UUID) *applier {
	return &applier{env: env, sub: sub, token: token, tables: map[string]*tableState{},
		position: sub.Position, sourcePos: sub.SourcePosition, batch: newBatch(env)}
}

// loadTables reads the lake tables of the subscription's source tables
// that exist already.
func (a *applier) loadTables(ctx context.Context) error {
	for _, row := range a.sub.SubscriptionRows {
		if row.Columns == nil || string(row.Columns) == "null" {
			continue // not created yet
		}
		var cols []Column
		if err := json.Unmarshal(row.Columns, &cols); err != nil {
			return fmt.Errorf("subscription %s: columns of %s: %w", a.sub.Name, row.SourceTable, err)
		}
		t, err := a.env.Catalog.TableByName(ctx, row.Namespace, row.TableName)
		if err != nil {
			if sqlerr.Code(err) == sqlerr.UndefinedTable {
				// Dropped in the lake behind the subscription's back.
				a.tables[row.SourceTable] = &tableState{source: row.SourceTable, cols: cols, failed: true}
				continue
			}
			return err
		}
		a.tables[row.SourceTable] = &tableState{source: row.SourceTable, cols: cols, t: t,
			failed: row.State == "error", syncedAt: row.SyncedAt}
	}
	return nil
}

// row is the subscription's row of a source table.
func (a *applier) row(source string) (catalog.SubscriptionTable, bool) {
	for _, r := range a.sub.SubscriptionRows {
		if r.SourceTable == source {
			return r, true
		}
	}
	return catalog.SubscriptionTable{}, false
}

// ensureTable returns the state of source table source with columns cols,
// creating its lake table (namespace target_schema, the source's table
// name) when it does not exist; a table that joins the subscription is
// registered first (42710 if another subscription owns the lake table).
// An existing lake table whose columns differ is evolved within the batch.
func (a *applier) ensureTable(ctx context.Context, source, name string, cols []Column) (*tableState, error) {
	if ts := a.tables[source]; ts != nil && ts.t != nil {
		return ts, nil
	}
	row, ok := a.row(source)
	if !ok {
		row = catalog.SubscriptionTable{SourceTable: source, Namespace: a.sub.TargetSchema, TableName: name}
		if _, err := a.env.Catalog.AddSubscriptionTable(ctx, a.sub.Name, row); err != nil {
			return nil, err
		}
		a.sub.SubscriptionRows = append(a.sub.SubscriptionRows, row)
	}
	ts := &tableState{source: source, cols: cols}
	a.tables[source] = ts
	t, err := a.env.Catalog.TableByName(ctx, row.Namespace, row.TableName)
	if sqlerr.Code(err) == sqlerr.UndefinedTable {
		t, err = a.createTable(ctx, row, cols)
	}
	if err != nil {
		return nil, err
	}
	ts.t = t
	// The lake table may be older than this subscription (one dropped
	// and created again): follow the source's columns.
	want, err := newLakeTable(t.ID, t.Namespace, t.Name, t.Path, cols, t.HashBucketNum)
	if err != nil {
		return nil, err
	}
	if !sameColumns(t, want) {
		old := lakeColumns(t, cols)
		nt, err := evolve(t, old, cols)
		if err != nil {
			return nil, err
		}
		if nt != nil {
			if err := a.batch.alter(ctx, ts, nt); err != nil {
				return nil, err
			}
		}
	}
	a.batch.states = append(a.batch.states, catalog.CDCTableState{SourceTable: source, TableID: t.ID, Columns: columnsJSON(cols)})
	return ts, nil
}

func (a *applier) createTable(ctx context.Context, row catalog.SubscriptionTable, cols []Column) (*catalog.Table, error) {
	if ok, err := a.env.Catalog.NamespaceExists(ctx, row.Namespace); err != nil {
		return nil, err
	} else if !ok {
		if err := a.env.Catalog.CreateNamespace(ctx, row.Namespace); err != nil && sqlerr.Code(err) != sqlerr.DuplicateSchema {
			return nil, err
		}
	}
	path, err := a.env.tableDir(row.Namespace, row.TableName)
	if err != nil {
		return nil, err
	}
	t, err := newLakeTable("table_"+uuid.NewString(), row.Namespace, row.TableName, path, cols, a.sub.HashBucketNum)
	if err != nil {
		return nil, incompatible("%v", err)
	}
	if err := a.env.Catalog.CreateTable(ctx, t); err != nil && sqlerr.Code(err) != sqlerr.DuplicateTable {
		return nil, err
	}
	return a.env.Catalog.TableByName(ctx, row.Namespace, row.TableName)
}

// sameColumns reports whether t has want's columns, names and types.
func sameColumns(t, want *catalog.Table) bool {
	if t.Schema.NumFields() != want.Schema.NumFields() || len(t.PKCols) != len(want.PKCols) {
		return false
	}
	for i, f := range want.Schema.Fields() {
		g := t.Schema.Field(i)
		if g.Name != f.Name || !arrow.TypeEqual(g.Type, f.Type) || !g.Metadata.Equal(f.Metadata) {
			return false
		}
	}
	return true
}

// lakeColumns describes the columns of an existing lake table as source
// columns, keyed as cols are (for evolve).
func lakeColumns(t *catalog.Table, cols []Column) []Column {
	var out []Column
	for _, f := range t.Schema.Fields() {
		if f.Name == OpColumn && t.CDCColumn() == OpColumn {
			continue
		}
		oid, mod := schema.PGTypeOf(f)
		c := Column{Name: f.Name, TypeOID: oid, TypeMod: mod}
		for _, s := range cols {
			if s.Name == f.Name {
				c.Key = s.Key
			}
		}
		out = append(out, c)
	}
	return out
}

// failTable stops one table: its rows in the open batch are dropped, the
// error recorded; the other tables go on.
func (a *applier) failTable(ctx context.Context, ts *tableState, cause error) error {
	ts.failed = true
	a.batch.dropTable(ctx, ts)
	a.env.logger().Warn("subscription table stopped", "subscription", a.sub.Name, "table", ts.source, "error", cause)
	return a.env.Catalog.SetSubscriptionTableError(ctx, a.sub.Name, a.token, ts.source, cause.Error())
}

// tableError handles an error of one table's change: an incompatible
// change stops the table, anything else ends the run.
func (a *applier) tableError(ctx context.Context, ts *tableState, err error) error {
	var inc *errIncompatible
	if errors.As(err, &inc) {
		return a.failTable(ctx, ts, err)
	}
	return err
}

// commit lands the open batch.
func (a *applier) commit(ctx context.Context) error {
	if a.batch.empty() {
		return nil
	}
	b := a.batch
	a.batch = newBatch(a.env)
	if b.end == "" {
		b.end = a.position
	}
	if _, err := b.commit(ctx, a.sub.Name, a.token, a.position, a.sourcePos); err != nil {
		return err
	}
	a.env.logger().Debug("subscription committed", "subscription", a.sub.Name, "from", a.position, "to", b.end,
		"transactions", b.txns, "rows", b.rows, "tables", len(b.tables))
	a.position = b.end
	if a.committed != nil {
		a.committed(a.position)
	}
	return nil
}

// due reports whether the open batch should be committed now.
func (a *applier) due() bool {
	b := a.batch
	return b.txns > 0 && (time.Since(b.opened) >= a.sub.CommitInterval || b.rows >= maxBatchRows)
}

// maxBatchRows commits a batch early when it holds this many rows.
const maxBatchRows = 1 << 20

// advance stores position pos with no changes (the source moved on through
// changes of no replicated table).
func (a *applier) advance(ctx context.Context, pos string) error {
	a.batch.end = pos
	a.batch.txns++
	a.batch.opened = time.Now()
	return a.commit(ctx)
}

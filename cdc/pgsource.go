package cdc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// A PostgreSQL publisher: the initial copy reads the tables in the
// snapshot a new logical replication slot exports (CREATE_REPLICATION_SLOT
// … EXPORT_SNAPSHOT, imported with SET TRANSACTION SNAPSHOT into a
// REPEATABLE READ transaction that COPYs each table), and is committed with
// the slot's consistent point as position; streaming then starts at the
// stored position with pgoutput (pgstream.go). Positions are LSNs.

// sourceTable is a table of a publication.
type sourceTable struct {
	Schema, Name string
	OID          uint32
}

func (t sourceTable) key() string { return t.Schema + "." + t.Name }

func (t sourceTable) ident() string { return quoteIdent(t.Schema) + "." + quoteIdent(t.Name) }

// pgCheck is what CREATE SUBSCRIPTION learns from the publisher.
type pgCheck struct {
	database string
	tables   []sourceTable
}

// checkPG connects to the publisher as a subscription will and checks what
// CREATE SUBSCRIPTION needs: replication rights (42501), wal_level =
// logical (55000), the publications (42704). It returns the database name
// and the publications' tables.
func checkPG(ctx context.Context, conn string, pubs []string) (*pgCheck, error) {
	rc, err := connectReplication(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer rc.Close(context.WithoutCancel(ctx))
	res, err := rc.Exec(ctx, "SHOW wal_level").ReadAll()
	if err != nil {
		return nil, sourceError("SHOW wal_level", err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 {
		return nil, fmt.Errorf("publisher: SHOW wal_level returned no row")
	}
	if level := string(res[0].Rows[0][0]); level != "logical" {
		return nil, &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
			Message: fmt.Sprintf("the publisher's wal_level is %q; logical replication needs wal_level = logical", level),
			Hint:    "Set wal_level = logical on the publisher and restart it."}
	}
	nc, err := connectPG(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer nc.Close(context.WithoutCancel(ctx))
	var out pgCheck
	if err := nc.QueryRow(ctx, "SELECT current_database()").Scan(&out.database); err != nil {
		return nil, sourceError("current_database()", err)
	}
	have, err := queryStrings(ctx, nc, "SELECT pubname FROM pg_catalog.pg_publication WHERE pubname = ANY($1)", pubs)
	if err != nil {
		return nil, err
	}
	for _, p := range pubs {
		if !contains(have, p) {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "publication %q does not exist on the publisher", p)
		}
	}
	if out.tables, err = publicationTables(ctx, nc, pubs); err != nil {
		return nil, err
	}
	return &out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func queryStrings(ctx context.Context, c *pgx.Conn, q string, args ...any) ([]string, error) {
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, sourceError("query", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, sourceError("query", err)
}

// publicationTables lists the tables of the publications.
func publicationTables(ctx context.Context, c *pgx.Conn, pubs []string) ([]sourceTable, error) {
	rows, err := c.Query(ctx, `SELECT DISTINCT p.schemaname::text, p.tablename::text, cl.oid::int8
		FROM pg_catalog.pg_publication_tables p
		JOIN pg_catalog.pg_namespace n ON n.nspname = p.schemaname
		JOIN pg_catalog.pg_class cl ON cl.relnamespace = n.oid AND cl.relname = p.tablename
		WHERE p.pubname = ANY($1) ORDER BY 1, 2`, pubs)
	if err != nil {
		return nil, sourceError("list the publications' tables", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (sourceTable, error) {
		var t sourceTable
		var oid int64
		err := r.Scan(&t.Schema, &t.Name, &oid)
		t.OID = uint32(oid)
		return t, err
	})
	return out, sourceError("list the publications' tables", err)
}

// tableColumns reads a source table's columns with its primary key.
func tableColumns(ctx context.Context, c *pgx.Conn, oid uint32) ([]Column, error) {
	rows, err := c.Query(ctx, `SELECT a.attname::text, a.atttypid::int8, a.atttypmod, a.attnum::int8,
			coalesce((SELECT k.n FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n) WHERE k.attnum = a.attnum), 0)::int8
		FROM pg_catalog.pg_attribute a
		LEFT JOIN pg_catalog.pg_index i ON i.indrelid = a.attrelid AND i.indisprimary
		WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
		ORDER BY a.attnum`, int64(oid))
	if err != nil {
		return nil, sourceError("read a table's columns", err)
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Column, error) {
		var col Column
		var typ int64
		var key, num int64
		err := r.Scan(&col.Name, &typ, &col.TypeMod, &num, &key)
		col.Key, col.Num = int(key), int(num)
		col.TypeOID = uint32(typ)
		return col, err
	})
	return cols, sourceError("read a table's columns", err)
}

// pgCopy takes the initial copy: a new slot, its exported snapshot, every
// table of the publications copied in it, committed with the slot's
// consistent point as position.
func (a *applier) pgCopy(ctx context.Context) error {
	at, err := a.pgSnapshotCopy(ctx, a.sub.SlotName, false, func(sourceTable) bool { return true })
	if err != nil {
		return err
	}
	a.batch.commitTxn(at.String(), time.Now())
	return a.commit(ctx)
}

// pgSyncTables copies the tables that joined a streaming subscription
// (REFRESH PUBLICATION, a new table in the stream) in the snapshot of a
// temporary slot, as PostgreSQL's table synchronisation does: the copy
// holds every change before the slot's consistent point, so the stream
// skips the table's changes before it (tableState.syncedAt). The position
// stays where it is.
func (a *applier) pgSyncTables(ctx context.Context) error {
	pending := map[string]bool{}
	for _, r := range a.sub.SubscriptionRows {
		if ts := a.tables[r.SourceTable]; (ts == nil || ts.t == nil) && r.State != "error" {
			pending[r.SourceTable] = true
		}
	}
	if len(pending) == 0 {
		return nil
	}
	at, err := a.pgSnapshotCopy(ctx, a.sub.SlotName+"_sync", true, func(st sourceTable) bool { return pending[st.key()] })
	if err != nil {
		return err
	}
	synced := at.String()
	for src := range pending {
		if ts := a.tables[src]; ts != nil {
			ts.syncedAt = synced
			a.batch.states = append(a.batch.states, catalog.CDCTableState{SourceTable: src, SyncedAt: &synced})
		}
	}
	a.batch.commitTxn(a.position, time.Now())
	return a.commit(ctx)
}

// pgSnapshotCopy creates a slot exporting its snapshot (temporary: gone
// with the connection) and copies the publications' tables that want
// picks into the batch, each replacing its lake table's rows. It returns
// the slot's consistent point.
func (a *applier) pgSnapshotCopy(ctx context.Context, slotName string, temporary bool, want func(sourceTable) bool) (pglogrepl.LSN, error) {
	rc, err := connectReplication(ctx, a.sub.Connection)
	if err != nil {
		return 0, err
	}
	defer rc.Close(context.WithoutCancel(ctx))
	if !temporary {
		// A slot left by a copy that never committed: its changes are not
		// ours to stream (the copy starts over in a new snapshot).
		if err := dropSlotOn(ctx, rc, slotName); err != nil {
			return 0, err
		}
	}
	action := "EXPORT_SNAPSHOT"
	if !a.sub.CopyData && !temporary {
		action = "NOEXPORT_SNAPSHOT"
	}
	slot, err := pglogrepl.CreateReplicationSlot(ctx, rc, slotName, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Mode: pglogrepl.LogicalReplication, SnapshotAction: action, Temporary: temporary})
	if err != nil {
		return 0, sourceError("create replication slot", err)
	}
	a.env.logger().Debug("subscription slot created", "subscription", a.sub.Name, "slot", slotName, "consistent_point", slot.ConsistentPoint)
	at, err := pglogrepl.ParseLSN(slot.ConsistentPoint)
	if err != nil {
		return 0, fmt.Errorf("publisher: consistent point %q: %w", slot.ConsistentPoint, err)
	}
	nc, err := connectPG(ctx, a.sub.Connection)
	if err != nil {
		return 0, err
	}
	defer nc.Close(context.WithoutCancel(ctx))
	tx, err := nc.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return 0, sourceError("begin the copy", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	copyRows := action == "EXPORT_SNAPSHOT"
	if copyRows {
		if _, err := tx.Exec(ctx, "SET TRANSACTION SNAPSHOT '"+slot.SnapshotName+"'"); err != nil {
			return 0, sourceError("import the slot's snapshot", err)
		}
	}
	sc := &snapshotConns{conn: a.sub.Connection, conns: []*pgx.Conn{nc}, txs: []pgx.Tx{tx}}
	defer sc.close(ctx)
	if copyRows {
		sc.snapshot = slot.SnapshotName
		if err := tx.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&sc.version); err != nil {
			return 0, sourceError("server version", err)
		}
	}
	tables, err := publicationTables(ctx, nc, a.sub.Publications)
	if err != nil {
		return 0, err
	}
	if err := checkTargetNames(tables); err != nil {
		return 0, err
	}
	a.batch.copying = true
	for _, st := range tables {
		if !want(st) {
			continue
		}
		cols, err := tableColumns(ctx, nc, st.OID)
		if err != nil {
			return 0, err
		}
		ts, err := a.ensureTable(ctx, st.key(), st.Name, cols)
		if err != nil {
			var inc *errIncompatible
			if ts = a.tables[st.key()]; ts != nil && errors.As(err, &inc) {
				if err := a.failTable(ctx, ts, err); err != nil {
					return 0, err
				}
				continue
			}
			return 0, err
		}
		if ts.failed {
			continue
		}
		a.batch.truncate(ctx, ts)
		if !copyRows {
			continue
		}
		began := time.Now()
		if err := a.copyTableChunks(ctx, sc, st, ts); err != nil {
			if err := a.tableError(ctx, ts, err); err != nil {
				return 0, err
			}
		}
		a.env.logger().Debug("subscription table copied", "subscription", a.sub.Name, "table", st.key(), "took", time.Since(began))
	}
	if err := tx.Commit(ctx); err != nil {
		return 0, sourceError("end the copy", err)
	}
	return at, nil
}

// checkTargetNames refuses publications with two tables of one name in
// different schemas: both would be the same lake table.
func checkTargetNames(tables []sourceTable) error {
	seen := map[string]string{}
	for _, t := range tables {
		if other, ok := seen[t.Name]; ok {
			return sqlerr.New(sqlerr.DuplicateTable, "source tables %s and %s would both be replicated into lake table %q", other, t.key(), t.Name)
		}
		seen[t.Name] = t.key()
	}
	return nil
}

// dropSlotOn drops a replication slot over a replication connection; a
// missing slot is no error.
func dropSlotOn(ctx context.Context, rc *pgconn.PgConn, slot string) error {
	err := pglogrepl.DropReplicationSlot(ctx, rc, slot, pglogrepl.DropReplicationSlotOptions{})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == sqlerr.UndefinedObject {
		return nil
	}
	return sourceError("drop replication slot", err)
}

// dropSlotPG drops the subscription's slot on the publisher (DROP
// SUBSCRIPTION), ending the walsender that still streams from it (its
// worker stops once it sees the subscription gone).
func dropSlotPG(ctx context.Context, conn, slot string) error {
	nc, err := connectPG(ctx, conn)
	if err != nil {
		return err
	}
	defer nc.Close(context.WithoutCancel(ctx))
	deadline := time.Now().Add(30 * time.Second)
	for {
		var pid *int64
		err := nc.QueryRow(ctx, "SELECT active_pid::int8 FROM pg_catalog.pg_replication_slots WHERE slot_name = $1", slot).Scan(&pid)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return sourceError("look up the replication slot", err)
		}
		if pid == nil {
			_, err := nc.Exec(ctx, "SELECT pg_catalog.pg_drop_replication_slot($1)", slot)
			var pe *pgconn.PgError
			if err == nil || (errors.As(err, &pe) && pe.Code == sqlerr.UndefinedObject) {
				return nil
			}
			if !(errors.As(err, &pe) && pe.Code == "55006") || time.Now().After(deadline) {
				return sourceError("drop the replication slot", err)
			}
		} else if _, err := nc.Exec(ctx, "SELECT pg_catalog.pg_terminate_backend($1::int)", *pid); err != nil {
			return sourceError("end the walsender of the replication slot", err)
		}
		if time.Now().After(deadline) {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "replication slot %q is still in use on the publisher", slot)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

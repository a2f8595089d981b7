package cdc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/sqltypes"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// A MySQL/MariaDB source: PUBLICATION names the databases. The initial copy
// reads every table in one consistent snapshot whose binary log position is
// known — MariaDB reports it for START TRANSACTION WITH CONSISTENT SNAPSHOT
// (binlog_snapshot_file/position); MySQL's is read under FLUSH TABLES WITH
// READ LOCK — and streaming then reads the row-based binary log from there
// (mysqlstream.go). Positions are "binlog-file:offset", the end of the last
// transaction the lake holds.

// checkMySQL checks a source for CREATE SUBSCRIPTION: the login, the
// binary log (on, ROW format: 55000 otherwise), replication rights (a
// binary log dump must start: 42501 otherwise), the databases (42704). It
// returns the databases' tables.
func checkMySQL(ctx context.Context, conn string, databases []string) ([]sourceTable, error) {
	c, err := connectMySQL(ctx, conn)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	rows, err := mysqlQuery(c, "read the binary log settings", "SELECT @@log_bin, @@binlog_format")
	if err != nil {
		return nil, err
	}
	if rows[0][0].ToString() != "1" {
		return nil, &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
			Message: "the MySQL source has no binary log (log_bin is off); CDC needs log_bin and binlog_format = ROW"}
	}
	if f := rows[0][1].ToString(); f != "ROW" {
		return nil, &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState,
			Message: fmt.Sprintf("the MySQL source's binlog_format is %s; CDC needs binlog_format = ROW", f)}
	}
	have, err := mysqlQuery(c, "list databases", "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME IN ("+mysqlList(databases)+")")
	if err != nil {
		return nil, err
	}
	for _, d := range databases {
		found := false
		for _, r := range have {
			found = found || r[0].ToString() == d
		}
		if !found {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "database %q does not exist on the MySQL source", d)
		}
	}
	if err := checkBinlogDump(ctx, conn); err != nil {
		return nil, err
	}
	return mysqlTables(c, databases)
}

// checkBinlogDump starts a binary log dump at the current position and
// reads its first event: a login without REPLICATION SLAVE fails here.
func checkBinlogDump(ctx context.Context, conn string) error {
	c, err := connectMySQL(ctx, conn)
	if err != nil {
		return err
	}
	defer c.Close()
	file, pos, err := mysqlCurrentPosition(c)
	if err != nil {
		return err
	}
	if err := startDump(c, file, pos); err != nil {
		return err
	}
	if _, err := c.ReadBinlogEvent(); err != nil {
		return mysqlError("read the binary log (the login needs REPLICATION SLAVE)", err)
	}
	return nil
}

// mysqlCurrentPosition is the source's current binary log position.
func mysqlCurrentPosition(c *mysql.Conn) (string, uint64, error) {
	rows, err := mysqlQuery(c, "SHOW MASTER STATUS (the login needs REPLICATION CLIENT or BINLOG MONITOR)", "SHOW MASTER STATUS")
	if err != nil {
		return "", 0, err
	}
	if len(rows) == 0 {
		return "", 0, &sqlerr.Error{Code: sqlerr.ObjectNotInPrerequisiteState, Message: "the MySQL source reports no binary log position"}
	}
	pos, err := strconv.ParseUint(rows[0][1].ToString(), 10, 64)
	return rows[0][0].ToString(), pos, err
}

// startDump asks for the binary log from file:pos, with checksums (stripped
// on reading) and MariaDB's GTID events.
func startDump(c *mysql.Conn, file string, pos uint64) error {
	for _, q := range []string{"SET @master_binlog_checksum = @@global.binlog_checksum", "SET @mariadb_slave_capability = 4"} {
		if _, err := c.ExecuteFetch(q, 0, false); err != nil {
			return mysqlError("prepare the binary log dump", err)
		}
	}
	serverID := uint32(1<<30 + rand.Int64N(1<<29))
	if err := c.SendBinlogDumpCommand(serverID, file, uint32(pos)); err != nil {
		return mysqlError("start the binary log dump", err)
	}
	return nil
}

// mysqlTables lists the base tables of the databases.
func mysqlTables(c *mysql.Conn, databases []string) ([]sourceTable, error) {
	rows, err := mysqlQuery(c, "list tables", "SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN ("+mysqlList(databases)+") ORDER BY 1, 2")
	if err != nil {
		return nil, err
	}
	out := make([]sourceTable, len(rows))
	for i, r := range rows {
		out[i] = sourceTable{Schema: r[0].ToString(), Name: r[1].ToString()}
	}
	return out, nil
}

// mysqlTableColumns reads a table's columns and primary key as the source
// has them now.
func mysqlTableColumns(c *mysql.Conn, st sourceTable) ([]Column, error) {
	rows, err := mysqlQuery(c, "read a table's columns", `SELECT c.COLUMN_NAME, c.DATA_TYPE, c.COLUMN_TYPE,
			coalesce(c.NUMERIC_PRECISION, -1), coalesce(c.NUMERIC_SCALE, -1), coalesce(c.CHARACTER_MAXIMUM_LENGTH, -1),
			coalesce((SELECT k.ORDINAL_POSITION FROM information_schema.KEY_COLUMN_USAGE k
			           WHERE k.TABLE_SCHEMA = c.TABLE_SCHEMA AND k.TABLE_NAME = c.TABLE_NAME
			             AND k.COLUMN_NAME = c.COLUMN_NAME AND k.CONSTRAINT_NAME = 'PRIMARY'), 0)
		FROM information_schema.COLUMNS c
		WHERE c.TABLE_SCHEMA = `+mysqlLiteral(st.Schema)+` AND c.TABLE_NAME = `+mysqlLiteral(st.Name)+`
		ORDER BY c.ORDINAL_POSITION`)
	if err != nil {
		return nil, err
	}
	cols := make([]Column, len(rows))
	for i, r := range rows {
		num := func(v sqltypes.Value) int { n, _ := strconv.Atoi(v.ToString()); return n }
		cols[i] = mysqlColumn(r[0].ToString(), strings.ToLower(r[1].ToString()), r[2].ToString(), num(r[3]), num(r[4]), num(r[5]))
		cols[i].Key = num(r[6])
	}
	return cols, nil
}

// myCopy takes the initial copy of a MySQL source in one consistent
// snapshot and commits it with the snapshot's binary log position.
func (a *applier) myCopy(ctx context.Context) error {
	c, err := connectMySQL(ctx, a.sub.Connection)
	if err != nil {
		return err
	}
	defer c.Close()
	file, pos, err := mysqlSnapshot(c)
	if err != nil {
		return err
	}
	tables, err := mysqlTables(c, a.sub.Publications)
	if err != nil {
		return err
	}
	if err := checkTargetNames(tables); err != nil {
		return err
	}
	a.batch.copying = true
	for _, st := range tables {
		cols, err := mysqlTableColumns(c, st)
		if err != nil {
			return err
		}
		ts, err := a.ensureTable(ctx, st.key(), st.Name, cols)
		if err != nil {
			if ts = a.tables[st.key()]; ts != nil {
				if err := a.tableError(ctx, ts, err); err != nil {
					return err
				}
				continue
			}
			return err
		}
		if ts.failed {
			continue
		}
		a.batch.truncate(ctx, ts)
		if !a.sub.CopyData {
			continue
		}
		if err := a.myCopyTable(ctx, c, st, ts); err != nil {
			if err := a.tableError(ctx, ts, err); err != nil {
				return err
			}
		}
	}
	if _, err := c.ExecuteFetch("COMMIT", 0, false); err != nil {
		return mysqlError("end the copy", err)
	}
	a.batch.commitTxn(fmt.Sprintf("%s:%d", file, pos), time.Now())
	return a.commit(ctx)
}

// mysqlSnapshot starts a consistent-snapshot transaction on c and returns
// its binary log position.
func mysqlSnapshot(c *mysql.Conn) (string, uint64, error) {
	if _, err := c.ExecuteFetch("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", 0, false); err != nil {
		return "", 0, mysqlError("set the isolation level", err)
	}
	// MariaDB: the snapshot's own position, no lock needed.
	if _, err := c.ExecuteFetch("START TRANSACTION WITH CONSISTENT SNAPSHOT", 0, false); err != nil {
		return "", 0, mysqlError("start the snapshot", err)
	}
	rows, err := mysqlQuery(c, "read the snapshot's position", "SHOW STATUS LIKE 'binlog_snapshot_%'")
	if err == nil && len(rows) == 2 {
		var file string
		var pos uint64
		for _, r := range rows {
			switch r[0].ToString() {
			case "binlog_snapshot_file":
				file = r[1].ToString()
			case "binlog_snapshot_position":
				pos, _ = strconv.ParseUint(r[1].ToString(), 10, 64)
			}
		}
		if file != "" {
			return file, pos, nil
		}
	}
	// MySQL: no writes while the snapshot starts and the position is read.
	if _, err := c.ExecuteFetch("ROLLBACK", 0, false); err != nil {
		return "", 0, mysqlError("restart the snapshot", err)
	}
	if _, err := c.ExecuteFetch("FLUSH TABLES WITH READ LOCK", 0, false); err != nil {
		return "", 0, mysqlError("FLUSH TABLES WITH READ LOCK (the login needs RELOAD)", err)
	}
	defer c.ExecuteFetch("UNLOCK TABLES", 0, false)
	if _, err := c.ExecuteFetch("START TRANSACTION WITH CONSISTENT SNAPSHOT", 0, false); err != nil {
		return "", 0, mysqlError("start the snapshot", err)
	}
	return mysqlCurrentPosition(c)
}

// myCopyTable streams one table's rows into the batch.
func (a *applier) myCopyTable(ctx context.Context, c *mysql.Conn, st sourceTable, ts *tableState) error {
	names := make([]string, len(ts.cols))
	for i, col := range ts.cols {
		names[i] = mysqlIdent(col.Name)
	}
	if err := c.ExecuteStreamFetch("SELECT " + strings.Join(names, ", ") + " FROM " + mysqlIdent(st.Schema) + "." + mysqlIdent(st.Name)); err != nil {
		return mysqlError("copy "+st.key(), err)
	}
	defer c.CloseResult()
	vals := make([]value, len(ts.cols))
	var row []sqltypes.Value
	for {
		var err error
		row, err = c.FetchNext(row[:0])
		if err != nil {
			return mysqlError("copy "+st.key(), err)
		}
		if row == nil {
			return nil
		}
		for i, v := range row {
			if v.IsNull() {
				vals[i] = value{kind: valNull}
				continue
			}
			text, err := mysqlText(ts.cols[i], v.Raw(), false)
			if err != nil {
				return incompatible("column %q: %v", ts.cols[i].Name, err)
			}
			vals[i] = value{kind: valText, data: text}
		}
		if err := a.batch.add(ctx, ts, opInsert, vals); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

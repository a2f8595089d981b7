package cdc

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"vitess.io/vitess/go/mysql"
	"vitess.io/vitess/go/mysql/binlog"
	querypb "vitess.io/vitess/go/vt/proto/query"
	"vitess.io/vitess/go/vt/sqlparser"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// Streaming a MySQL/MariaDB binary log (ROW format) from the stored
// position. A reader goroutine reads events into a channel (the dump has
// no keepalives to answer: a source that waits on us just waits); the
// applier decodes them in order. Transactions end with an XID (InnoDB) or
// a COMMIT query; a DDL statement is a transaction of its own. Row events
// are decoded positionally against the columns the subscription tracks,
// which follow the DDL statements in the log (parsed with vitess's
// sqlparser) — not the source's current catalog, which may be ahead.

type binlogItem struct {
	ev  mysql.BinlogEvent
	err error
}

// myState is the applier's view of the binary log.
type myState struct {
	a      *applier
	format mysql.BinlogFormat
	file   string
	inTxn  bool
	maps   map[uint64]*mysql.TableMap
	parser *sqlparser.Parser
}

func splitPosition(p string) (string, uint64, error) {
	i := strings.LastIndexByte(p, ':')
	if i < 0 {
		return "", 0, fmt.Errorf("position %q is not file:offset", p)
	}
	n, err := strconv.ParseUint(p[i+1:], 10, 64)
	return p[:i], n, err
}

func (a *applier) myStream(ctx context.Context) error {
	file, pos, err := splitPosition(a.position)
	if err != nil {
		return err
	}
	c, err := connectMySQL(ctx, a.sub.Connection)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := startDump(c, file, pos); err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan binlogItem, 256)
	safego.Go(func() {
		// A panic of the reader ends the stream with that error.
		defer safego.RecoverTo(func(err error) {
			select {
			case items <- binlogItem{nil, err}:
			case <-rctx.Done():
			}
		})
		for {
			ev, err := c.ReadBinlogEvent()
			select {
			case items <- binlogItem{ev, err}:
			case <-rctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	})
	safego.Go(func() { <-rctx.Done(); c.Close() }) // unblocks the reader
	parser, err := sqlparser.New(sqlparser.Options{MySQLServerVersion: "8.0.30"})
	if err != nil {
		return err
	}
	s := &myState{a: a, file: file, maps: map[uint64]*mysql.TableMap{}, parser: parser}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case it := <-items:
			if it.err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return mysqlError("read the binary log", it.err)
			}
			if err := s.handle(ctx, it.ev); err != nil {
				return err
			}
		case <-tick.C:
		}
		if !s.inTxn && a.due() {
			if err := a.commit(ctx); err != nil {
				return err
			}
		}
	}
}

func (s *myState) handle(ctx context.Context, ev mysql.BinlogEvent) error {
	if !ev.IsValid() {
		return fmt.Errorf("MySQL source: an invalid binary log event")
	}
	if ev.IsFormatDescription() {
		f, err := ev.Format()
		if err != nil {
			return fmt.Errorf("MySQL source: format description: %w", err)
		}
		s.format = f
		return nil
	}
	if s.format.IsZero() {
		return nil // the fake rotate ahead of the first format description
	}
	ev, _, err := ev.StripChecksum(s.format)
	if err != nil {
		return err
	}
	f := s.format
	a := s.a
	end := func() string { return fmt.Sprintf("%s:%d", s.file, ev.NextPosition()) }
	if ev.NextPosition() > 0 {
		a.sourcePos = end() // the newest position read (lag_seconds is 0 at it)
	}
	switch {
	case ev.IsRotate():
		file, _, err := ev.NextLogFile(f)
		if err != nil {
			return err
		}
		s.file = file
	case ev.IsGTID():
		_, hasBegin, _, _, err := ev.GTID(f)
		if err != nil {
			return err
		}
		s.inTxn = hasBegin
	case ev.IsXID():
		s.inTxn = false
		a.batch.commitTxn(end(), time.Unix(int64(ev.Timestamp()), 0))
	case ev.IsQuery():
		q, err := ev.Query(f)
		if err != nil {
			return err
		}
		switch strings.ToUpper(strings.TrimSpace(q.SQL)) {
		case "BEGIN":
			s.inTxn = true
			return nil
		case "COMMIT":
			s.inTxn = false
			a.batch.commitTxn(end(), time.Unix(int64(ev.Timestamp()), 0))
			return nil
		}
		if err := s.ddl(ctx, q); err != nil {
			return err
		}
		if !s.inTxn {
			a.batch.commitTxn(end(), time.Unix(int64(ev.Timestamp()), 0))
		}
	case ev.IsTableMap():
		tm, err := ev.TableMap(f)
		if err != nil {
			return err
		}
		s.maps[ev.TableID(f)] = tm
	case ev.IsWriteRows(), ev.IsUpdateRows(), ev.IsDeleteRows():
		return s.rows(ctx, ev)
	case ev.IsPartialUpdateRows():
		return fmt.Errorf("MySQL source: partial JSON updates (binlog_row_value_options = PARTIAL_JSON) are not supported")
	}
	return nil
}

// replicated reports whether database db is one the subscription takes.
func (s *myState) replicated(db string) bool { return slices.Contains(s.a.sub.Publications, db) }

// rows applies a rows event.
func (s *myState) rows(ctx context.Context, ev mysql.BinlogEvent) error {
	f := s.format
	tm := s.maps[ev.TableID(f)]
	if tm == nil {
		return fmt.Errorf("MySQL source: a rows event of an unknown table id %d", ev.TableID(f))
	}
	if !s.replicated(tm.Database) {
		return nil
	}
	a := s.a
	source := tm.Database + "." + tm.Name
	ts := a.tables[source]
	if ts == nil || ts.t == nil {
		// Not seen created: take its columns as the source has them now.
		var err error
		if ts, err = s.joinTable(ctx, sourceTable{Schema: tm.Database, Name: tm.Name}); err != nil || ts == nil {
			return err
		}
	}
	if ts.failed {
		return nil
	}
	if len(tm.Types) != len(ts.cols) {
		return a.tableError(ctx, ts, incompatible("the binary log has %d columns for %s, the subscription knows %d: a schema change it could not follow",
			len(tm.Types), source, len(ts.cols)))
	}
	rows, err := ev.Rows(f, tm)
	if err != nil {
		return err
	}
	for i := range rows.Rows {
		r := &rows.Rows[i]
		var err error
		switch {
		case ev.IsWriteRows():
			var vals []value
			if vals, err = decodeRow(tm, rows.DataColumns, r.NullColumns, r.Data, ts.cols); err == nil {
				err = a.batch.add(ctx, ts, opInsert, vals)
			}
		case ev.IsDeleteRows():
			var old []value
			if old, err = decodeRow(tm, rows.IdentifyColumns, r.NullIdentifyColumns, r.Identify, ts.cols); err == nil {
				err = a.batch.add(ctx, ts, opDelete, keyOnly(ts, old))
			}
		default:
			var old, vals []value
			if old, err = decodeRow(tm, rows.IdentifyColumns, r.NullIdentifyColumns, r.Identify, ts.cols); err == nil {
				vals, err = decodeRow(tm, rows.DataColumns, r.NullColumns, r.Data, ts.cols)
			}
			switch {
			case err != nil:
			case !sameKey(ts, old, vals):
				if err = a.batch.add(ctx, ts, opDelete, keyOnly(ts, old)); err == nil {
					err = a.batch.add(ctx, ts, opInsert, vals)
				}
			default:
				err = a.batch.add(ctx, ts, opUpdate, vals)
			}
		}
		if err != nil {
			return a.tableError(ctx, ts, err)
		}
		if ts.failed {
			return nil
		}
	}
	return nil
}

// decodeRow decodes one row image: columns not in the image are unchanged
// (binlog_row_image = MINIMAL).
func decodeRow(tm *mysql.TableMap, present, nulls mysql.Bitmap, data []byte, cols []Column) ([]value, error) {
	vals := make([]value, len(cols))
	pos, vi := 0, 0
	for c := 0; c < present.Count() && c < len(cols); c++ {
		if !present.Bit(c) {
			vals[c] = value{kind: valUnchanged}
			continue
		}
		if nulls.Bit(vi) {
			vals[c] = value{kind: valNull}
			vi++
			continue
		}
		field := &querypb.Field{Type: querypb.Type_INT64}
		if cols[c].Unsigned {
			field.Type = querypb.Type_UINT64
		}
		v, l, err := binlog.CellValue(data, pos, tm.Types[c], tm.Metadata[c], field, false)
		if err != nil {
			return nil, incompatible("column %q: %v", cols[c].Name, err)
		}
		pos += l
		vi++
		text, err := mysqlText(cols[c], v.Raw(), true)
		if err != nil {
			return nil, incompatible("column %q: %v", cols[c].Name, err)
		}
		vals[c] = value{kind: valText, data: text}
	}
	return vals, nil
}

// joinTable brings a table of a replicated database the subscription does
// not know into it, with its columns as the source has them now (a table
// created in the log is announced by its CREATE TABLE, see ddl).
func (s *myState) joinTable(ctx context.Context, st sourceTable) (*tableState, error) {
	a := s.a
	if err := checkTargetNames(a.knownSources(st.key())); err != nil {
		a.env.logger().Warn("subscription skips a new source table", "subscription", a.sub.Name, "table", st.key(), "error", err)
		ts := &tableState{source: st.key(), failed: true}
		a.tables[st.key()] = ts
		return ts, nil
	}
	c, err := connectMySQL(ctx, a.sub.Connection)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	cols, err := mysqlTableColumns(c, st)
	if err != nil {
		return nil, err
	}
	return s.newTable(ctx, st, cols)
}

func (s *myState) newTable(ctx context.Context, st sourceTable, cols []Column) (*tableState, error) {
	a := s.a
	ts, err := a.ensureTable(ctx, st.key(), st.Name, cols)
	if err != nil {
		if ts = a.tables[st.key()]; ts != nil {
			return ts, a.tableError(ctx, ts, err)
		}
		return nil, err
	}
	return ts, nil
}

// ddl follows a statement of the binary log that is not BEGIN/COMMIT.
func (s *myState) ddl(ctx context.Context, q mysql.Query) error {
	stmt, err := s.parser.Parse(q.SQL)
	if err != nil {
		return nil // not a statement that changes tables (procedures, grants, …)
	}
	a := s.a
	table := func(tn sqlparser.TableName) (sourceTable, *tableState) {
		db := tn.Qualifier.String()
		if db == "" {
			db = q.Database
		}
		st := sourceTable{Schema: db, Name: tn.Name.String()}
		ts := a.tables[st.key()]
		if ts != nil && (ts.failed || ts.t == nil) {
			ts = nil
		}
		return st, ts
	}
	switch d := stmt.(type) {
	case *sqlparser.CreateTable:
		st, _ := table(d.Table)
		if !s.replicated(st.Schema) || d.Temp || a.tables[st.key()] != nil {
			return nil
		}
		if d.TableSpec == nil {
			_, err := s.joinTable(ctx, st) // CREATE TABLE … LIKE / AS SELECT
			return err
		}
		_, err := s.newTable(ctx, st, specColumns(d.TableSpec))
		return err
	case *sqlparser.AlterTable:
		st, ts := table(d.Table)
		if ts == nil || !s.replicated(st.Schema) {
			return nil
		}
		cols, err := alterColumns(ts.cols, d)
		if err != nil {
			return a.tableError(ctx, ts, err)
		}
		nt, err := evolve(ts.t, ts.cols, cols)
		if err != nil {
			return a.tableError(ctx, ts, err)
		}
		ts.cols = cols
		if nt != nil {
			return a.batch.alter(ctx, ts, nt)
		}
	case *sqlparser.TruncateTable:
		if _, ts := table(d.Table); ts != nil {
			a.batch.truncate(ctx, ts)
		}
	case *sqlparser.DropTable:
		for _, tn := range d.FromTables {
			if _, ts := table(tn); ts != nil && !d.Temp {
				if err := a.failTable(ctx, ts, errors.New("the table was dropped at the source")); err != nil {
					return err
				}
			}
		}
	case *sqlparser.RenameTable:
		for _, p := range d.TablePairs {
			if _, ts := table(p.FromTable); ts != nil {
				if err := a.failTable(ctx, ts, incompatible("the table was renamed at the source; renames are not replicated")); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// defColumn is the Column of a column definition of a DDL statement.
func defColumn(def *sqlparser.ColumnDefinition) Column {
	t := def.Type
	dataType := strings.ToLower(t.Type)
	switch dataType {
	case "bool", "boolean":
		dataType = "tinyint"
	case "integer":
		dataType = "int"
	case "dec", "fixed", "numeric":
		dataType = "decimal"
	case "double precision", "real":
		dataType = "double"
	case "character varying", "nvarchar", "nchar varying":
		dataType = "varchar"
	case "character", "nchar":
		dataType = "char"
	case "json":
		dataType = "longtext"
	}
	columnType := dataType
	if t.Unsigned {
		columnType += " unsigned"
	}
	if len(t.EnumValues) > 0 {
		columnType = dataType + "(" + strings.Join(t.EnumValues, ",") + ")"
		if !strings.HasPrefix(t.EnumValues[0], "'") {
			quoted := make([]string, len(t.EnumValues))
			for i, v := range t.EnumValues {
				quoted[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
			}
			columnType = dataType + "(" + strings.Join(quoted, ",") + ")"
		}
	}
	length, scale := -1, -1
	if t.Length != nil {
		length = *t.Length
	}
	if t.Scale != nil {
		scale = *t.Scale
	}
	c := mysqlColumn(def.Name.String(), dataType, columnType, length, scale, length)
	if dataType == "char" && length < 0 {
		c.TypeMod = 1 + 4 // char is char(1)
	}
	if t.Options != nil && t.Options.KeyOpt == sqlparser.ColKeyPrimary {
		c.Key = 1
	}
	return c
}

// specColumns are the columns of CREATE TABLE, with the primary key.
func specColumns(spec *sqlparser.TableSpec) []Column {
	cols := make([]Column, len(spec.Columns))
	for i, def := range spec.Columns {
		cols[i] = defColumn(def)
	}
	for _, idx := range spec.Indexes {
		if idx.Info == nil || idx.Info.Type != sqlparser.IndexTypePrimary {
			continue
		}
		for k, ic := range idx.Columns {
			for i := range cols {
				if strings.EqualFold(cols[i].Name, ic.Column.String()) {
					cols[i].Key = k + 1
				}
			}
		}
	}
	return cols
}

// alterColumns applies ALTER TABLE to a table's columns: added, dropped and
// modified columns, in their places; renames and key changes are
// errIncompatible.
func alterColumns(old []Column, d *sqlparser.AlterTable) ([]Column, error) {
	cols := slices.Clone(old)
	find := func(name string) int {
		return slices.IndexFunc(cols, func(c Column) bool { return strings.EqualFold(c.Name, name) })
	}
	place := func(c Column, first bool, after *sqlparser.ColName) {
		at := len(cols)
		if first {
			at = 0
		} else if after != nil {
			if i := find(after.Name.String()); i >= 0 {
				at = i + 1
			}
		}
		cols = slices.Insert(cols, at, c)
	}
	for _, opt := range d.AlterOptions {
		switch o := opt.(type) {
		case *sqlparser.AddColumns:
			for i, def := range o.Columns {
				c := defColumn(def)
				if c.Key > 0 {
					return nil, incompatible("column %q was added to the primary key", c.Name)
				}
				after := o.After
				if i > 0 {
					after = &sqlparser.ColName{Name: o.Columns[i-1].Name}
				}
				place(c, o.First && i == 0, after)
			}
		case *sqlparser.DropColumn:
			if i := find(o.Name.Name.String()); i >= 0 {
				cols = slices.Delete(cols, i, i+1)
			}
		case *sqlparser.ModifyColumn, *sqlparser.ChangeColumn:
			var def *sqlparser.ColumnDefinition
			var oldName string
			var first bool
			var after *sqlparser.ColName
			if m, ok := o.(*sqlparser.ModifyColumn); ok {
				def, oldName, first, after = m.NewColDefinition, m.NewColDefinition.Name.String(), m.First, m.After
			} else {
				ch := o.(*sqlparser.ChangeColumn)
				def, oldName, first, after = ch.NewColDefinition, ch.OldColumn.Name.String(), ch.First, ch.After
			}
			i := find(oldName)
			if i < 0 {
				return nil, incompatible("column %q is not known", oldName)
			}
			c := defColumn(def)
			if !strings.EqualFold(c.Name, cols[i].Name) {
				return nil, incompatible("column %q was renamed to %q; renames are not replicated", cols[i].Name, c.Name)
			}
			c.Name, c.Key = cols[i].Name, cols[i].Key
			if first || after != nil {
				cols = slices.Delete(cols, i, i+1)
				place(c, first, after)
			} else {
				cols[i] = c
			}
		case *sqlparser.RenameColumn:
			return nil, incompatible("column %q was renamed to %q; renames are not replicated", o.OldName.Name.String(), o.NewName.Name.String())
		case *sqlparser.RenameTableName:
			return nil, incompatible("the table was renamed to %s; renames are not replicated", sqlparser.String(o.Table))
		case *sqlparser.AddIndexDefinition:
			if o.IndexDefinition.Info.Type == sqlparser.IndexTypePrimary {
				return nil, incompatible("the primary key changed")
			}
		case *sqlparser.DropKey:
			if o.Type == sqlparser.PrimaryKeyType {
				return nil, incompatible("the primary key was dropped")
			}
		}
	}
	return cols, nil
}

package engine

import (
	"context"
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CREATE TABLE … AS and SELECT … INTO.
//
// The new table's columns are the query's result columns (names, PostgreSQL
// types); the table is created and filled in one catalog transaction: inside
// a block as part of it, otherwise as a block of its own, so a failing query
// leaves no table behind and a reader never sees the table empty.

// ctasTypeNames are the column types a query result may give a new table.
var ctasTypeNames = map[uint32]string{
	schema.OIDBool: "bool", schema.OIDBytea: "bytea", schema.OIDInt2: "int2", schema.OIDInt4: "int4",
	schema.OIDInt8: "int8", schema.OIDFloat4: "float4", schema.OIDFloat8: "float8", schema.OIDNumeric: "numeric",
	schema.OIDText: "text", schema.OIDVarchar: "varchar", schema.OIDBPChar: "bpchar", schema.OIDDate: "date",
	schema.OIDTimestamp: "timestamp", schema.OIDTimestamptz: "timestamptz", schema.OIDUUID: "uuid",
	schema.OIDJSON: "json", schema.OIDJSONB: "jsonb",
}

// columnTypeName is the TypeName of a result column for a new table.
func columnTypeName(c pgwire.Column) (*pg_query.TypeName, error) {
	name, ok := ctasTypeNames[c.TypeOID]
	if isEnumOID(c.TypeOID) {
		name, ok = schema.EnumPGType(c.TypeOID), true // enum.go
	}
	if !ok {
		return nil, sqlerr.Unsupported(fmt.Sprintf("a result column %q of type OID %d in CREATE TABLE AS", c.Name, c.TypeOID),
			"cast the column to a supported type")
	}
	tn := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(name)}, Typemod: -1, Location: -1}
	if c.TypeModifier >= 4 {
		switch c.TypeOID {
		case schema.OIDVarchar, schema.OIDBPChar:
			tn.Typmods = []*pg_query.Node{pg_query.MakeAConstIntNode(int64(c.TypeModifier-4), -1)}
		case schema.OIDNumeric:
			m := c.TypeModifier - 4
			tn.Typmods = []*pg_query.Node{pg_query.MakeAConstIntNode(int64(m>>16), -1), pg_query.MakeAConstIntNode(int64(m&0xffff), -1)}
		}
	}
	return tn, nil
}

func (s *Session) planCreateTableAs(ctx context.Context, n *pg_query.CreateTableAsStmt) (pgwire.Statement, error) {
	if n.Objtype != pg_query.ObjectType_OBJECT_TABLE {
		return nil, sqlerr.Unsupported("CREATE MATERIALIZED VIEW", "CREATE TABLE … AS SELECT, or CREATE VIEW")
	}
	if st, ok, err := s.planTempDML(ctx, &pg_query.Node{Node: &pg_query.Node_CreateTableAsStmt{CreateTableAsStmt: n}}, nil); ok {
		return st, err // temptable.go
	}
	into := n.Into
	if into.AccessMethod != "" || into.TableSpaceName != "" {
		return nil, sqlerr.Unsupported("USING / TABLESPACE", "CREATE TABLE … AS SELECT")
	}
	if n.Query.GetSelectStmt() == nil {
		return nil, sqlerr.Unsupported("CREATE TABLE … AS of this statement", "CREATE TABLE … AS SELECT | VALUES")
	}
	q, err := s.planSelect(ctx, proto.Clone(n.Query).(*pg_query.Node), nil)
	if err != nil {
		return nil, err
	}
	if len(q.ParamOIDs()) > 0 {
		return nil, sqlerr.Unsupported("parameters in CREATE TABLE … AS", "constants")
	}
	cols, err := q.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if len(into.ColNames) > len(cols) {
		return nil, sqlerr.New(sqlerr.SyntaxError, "too many column names were specified")
	}
	create := &pg_query.CreateStmt{Relation: into.Rel, Options: into.Options, IfNotExists: n.IfNotExists, Oncommit: into.OnCommit}
	var names []*pg_query.Node
	for i, c := range cols {
		name := c.Name
		if i < len(into.ColNames) {
			name = into.ColNames[i].GetString_().GetSval()
		}
		if name == "?column?" {
			return nil, sqlerr.Unsupported(fmt.Sprintf("an unnamed result column (%d) in CREATE TABLE AS", i+1), "name every column (… AS name)")
		}
		tn, err := columnTypeName(c)
		if err != nil {
			return nil, err
		}
		create.TableElts = append(create.TableElts, &pg_query.Node{Node: &pg_query.Node_ColumnDef{ColumnDef: &pg_query.ColumnDef{
			Colname: name, TypeName: tn, IsLocal: true, Location: -1}}})
		names = append(names, pg_query.MakeResTargetNodeWithName(name, -1))
	}
	createSt, err := s.planCreateTable(ctx, create)
	if err != nil {
		return nil, err
	}
	insert := &pg_query.Node{Node: &pg_query.Node_InsertStmt{InsertStmt: &pg_query.InsertStmt{
		Relation: into.Rel, Cols: names, SelectStmt: n.Query, Override: pg_query.OverridingKind_OVERRIDING_NOT_SET}}}
	return &funcStmt{tag: "SELECT", run: func(ctx context.Context, _ []any) (string, [][]any, error) {
		if n.IfNotExists {
			if _, err := s.lookupTable(ctx, into.Rel.Schemaname, into.Rel.Relname); err == nil {
				return "CREATE TABLE AS", nil, nil // PostgreSQL: a notice, nothing done
			}
		}
		implicit := !s.inBlock
		if implicit {
			s.beginTx(nil) // one catalog transaction: table and rows
		}
		tag, err := s.runCreateTableAs(ctx, createSt, insert, into.SkipData)
		if implicit {
			if err != nil {
				s.rollbackBlock(ctx)
				return "", nil, err
			}
			if end, err := s.commitBlock(ctx); err != nil || end != "COMMIT" {
				if err == nil {
					err = sqlerr.New(sqlerr.InternalError, "CREATE TABLE AS rolled back")
				}
				return "", nil, err
			}
		}
		return tag, nil, err
	}}, nil
}

// runCreateTableAs creates the table and inserts the query's rows, inside the
// open block.
func (s *Session) runCreateTableAs(ctx context.Context, createSt pgwire.Statement, insert *pg_query.Node, skipData bool) (string, error) {
	if _, _, err := createSt.(*funcStmt).run(ctx, nil); err != nil {
		return "", err
	}
	if skipData {
		return "SELECT 0", nil
	}
	st, err := s.plan(ctx, insert, nil)
	if err != nil {
		return "", err
	}
	tag, _, err := st.(*funcStmt).run(ctx, nil)
	if err != nil {
		return "", err
	}
	// INSERT 0 n → SELECT n
	return "SELECT " + tag[strings.LastIndexByte(tag, ' ')+1:], nil
}

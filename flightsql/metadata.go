package flightsql

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql/schema_ref"

	"github.com/lakesoul-go/lakesoul/engine"
)

// Metadata commands. They answer from the catalog as the caller's role
// (engine.LakeNamespaces/LakeTables), so a workspace's objects are listed
// to its users only, as pg_catalog over pgwire shows them. The one catalog
// is the database, "lakesoul"; the schemas are the lake namespaces; every
// table is a "TABLE" whose Arrow schema is what SELECT * of it yields.

const tableType = "TABLE"

// registerSQLInfo fills in what GetSqlInfo reports.
func (s *Server) registerSQLInfo() error {
	for id, v := range map[flightsql.SqlInfo]any{
		flightsql.SqlInfoFlightSqlServerName:         "LakeSoul-Go",
		flightsql.SqlInfoFlightSqlServerVersion:      "16.4",
		flightsql.SqlInfoFlightSqlServerArrowVersion: "18",
		flightsql.SqlInfoFlightSqlServerReadOnly:     false,
		flightsql.SqlInfoFlightSqlServerSql:          true,
		flightsql.SqlInfoFlightSqlServerSubstrait:    false,
		flightsql.SqlInfoFlightSqlServerTransaction:  int32(flightsql.SqlTransactionTransaction),
		flightsql.SqlInfoFlightSqlServerCancel:       false,
		flightsql.SqlInfoDDLCatalog:                  false,
		flightsql.SqlInfoDDLSchema:                   true,
		flightsql.SqlInfoDDLTable:                    true,
		flightsql.SqlInfoIdentifierQuoteChar:         `"`,
		flightsql.SqlInfoTransactionsSupported:       true,
	} {
		if err := s.RegisterSqlInfo(id, v); err != nil {
			return err
		}
	}
	return nil
}

// commandInfo is the FlightInfo of a metadata command: its schema and one
// endpoint whose ticket is the command itself.
func (s *Server) commandInfo(sc *arrow.Schema, desc *flight.FlightDescriptor) *flight.FlightInfo {
	return s.flightInfo(sc, desc, desc.Cmd)
}

// records streams rows (JSON objects by field name) as one batch of sc.
func (s *Server) records(sc *arrow.Schema, rows []map[string]any) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	b := array.NewRecordBuilder(s.mem, sc)
	defer b.Release()
	for _, r := range rows {
		line, err := json.Marshal(r)
		if err != nil {
			return nil, nil, err
		}
		if err := b.UnmarshalJSON(line); err != nil {
			return nil, nil, err
		}
	}
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: b.NewRecordBatch()}
	close(ch)
	return sc, ch, nil
}

func (s *Server) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(schema_ref.Catalogs, desc), nil
}

func (s *Server) DoGetCatalogs(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.records(schema_ref.Catalogs, []map[string]any{{"catalog_name": engine.DatabaseName}})
}

func (s *Server) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(schema_ref.TableTypes, desc), nil
}

func (s *Server) DoGetTableTypes(context.Context) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	return s.records(schema_ref.TableTypes, []map[string]any{{"table_type": tableType}})
}

func (s *Server) GetFlightInfoSchemas(_ context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(schema_ref.DBSchemas, desc), nil
}

func (s *Server) DoGetDBSchemas(ctx context.Context, cmd flightsql.GetDBSchemas) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var rows []map[string]any
	if catalogMatches(cmd.GetCatalog()) {
		c := clientFrom(ctx)
		if err := c.lock(ctx); err != nil {
			return nil, nil, err
		}
		names, err := c.sess.LakeNamespaces(ctx)
		c.unlock()
		if err != nil {
			return nil, nil, flightError(err)
		}
		match := likeMatcher(cmd.GetDBSchemaFilterPattern())
		for _, n := range names {
			if match(n) {
				rows = append(rows, map[string]any{"catalog_name": engine.DatabaseName, "db_schema_name": n})
			}
		}
	}
	return s.records(schema_ref.DBSchemas, rows)
}

func (s *Server) GetFlightInfoTables(_ context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return s.commandInfo(schema_ref.TablesWithIncludedSchema, desc), nil
	}
	return s.commandInfo(schema_ref.Tables, desc), nil
}

// tablesOf lists the tables the caller sees that match a catalog, schema
// pattern and table pattern.
func tablesOf(ctx context.Context, catalog, schemaPattern, tablePattern *string) ([]engine.LakeTable, error) {
	if !catalogMatches(catalog) {
		return nil, nil
	}
	c := clientFrom(ctx)
	if err := c.lock(ctx); err != nil {
		return nil, err
	}
	ts, err := c.sess.LakeTables(ctx, "")
	c.unlock()
	if err != nil {
		return nil, flightError(err)
	}
	ms, mt := likeMatcher(schemaPattern), likeMatcher(tablePattern)
	out := ts[:0]
	for _, t := range ts {
		if ms(t.Namespace) && mt(t.Name) {
			out = append(out, t)
		}
	}
	return out, nil
}

func (s *Server) DoGetTables(ctx context.Context, cmd flightsql.GetTables) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	sc := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		sc = schema_ref.TablesWithIncludedSchema
	}
	types := cmd.GetTableTypes()
	wantTable := len(types) == 0
	for _, t := range types {
		wantTable = wantTable || strings.EqualFold(t, tableType)
	}
	var ts []engine.LakeTable
	if wantTable {
		var err error
		if ts, err = tablesOf(ctx, cmd.GetCatalog(), cmd.GetDBSchemaFilterPattern(), cmd.GetTableNameFilterPattern()); err != nil {
			return nil, nil, err
		}
	}
	b := array.NewRecordBuilder(s.mem, sc)
	defer b.Release()
	for _, t := range ts {
		b.Field(0).(*array.StringBuilder).Append(engine.DatabaseName)
		b.Field(1).(*array.StringBuilder).Append(t.Namespace)
		b.Field(2).(*array.StringBuilder).Append(t.Name)
		b.Field(3).(*array.StringBuilder).Append(tableType)
		if cmd.GetIncludeSchema() {
			b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(t.Schema, s.mem))
		}
	}
	ch := make(chan flight.StreamChunk, 1)
	ch <- flight.StreamChunk{Data: b.NewRecordBatch()}
	close(ch)
	return sc, ch, nil
}

func (s *Server) GetFlightInfoPrimaryKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(schema_ref.PrimaryKeys, desc), nil
}

func (s *Server) DoGetPrimaryKeys(ctx context.Context, ref flightsql.TableRef) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	exact := func(p *string) *string {
		if p == nil {
			return nil
		}
		q := likeEscape(*p)
		return &q
	}
	name := ref.Table
	ts, err := tablesOf(ctx, ref.Catalog, exact(ref.DBSchema), exact(&name))
	if err != nil {
		return nil, nil, err
	}
	var rows []map[string]any
	for _, t := range ts {
		for i, col := range t.PrimaryKey {
			rows = append(rows, map[string]any{"catalog_name": engine.DatabaseName, "db_schema_name": t.Namespace,
				"table_name": t.Name, "column_name": col, "key_sequence": i + 1, "key_name": t.Name + "_pkey"})
		}
	}
	return s.records(schema_ref.PrimaryKeys, rows)
}

func (s *Server) GetFlightInfoXdbcTypeInfo(_ context.Context, _ flightsql.GetXdbcTypeInfo, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return s.commandInfo(schema_ref.XdbcTypeInfo, desc), nil
}

// xdbcTypes are the lake column types with their XDBC (JDBC/ODBC) codes.
var xdbcTypes = []struct {
	name       string
	code, size int32
	fixed      bool
}{
	{"boolean", -7, 1, false}, {"smallint", 5, 5, true}, {"integer", 4, 10, true}, {"bigint", -5, 19, true},
	{"real", 7, 24, false}, {"double precision", 8, 53, false}, {"numeric", 3, 38, true},
	{"text", 12, 1 << 30, false}, {"character varying", 12, 10485760, false}, {"bytea", -3, 1 << 30, false},
	{"date", 91, 10, false}, {"timestamp", 93, 26, false}, {"timestamptz", 93, 32, false},
	{"uuid", 12, 36, false}, {"json", 12, 1 << 30, false}, {"jsonb", 12, 1 << 30, false},
}

func (s *Server) DoGetXdbcTypeInfo(_ context.Context, cmd flightsql.GetXdbcTypeInfo) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	var rows []map[string]any
	for _, t := range xdbcTypes {
		if dt := cmd.GetDataType(); dt != nil && *dt != t.code {
			continue
		}
		r := map[string]any{"type_name": t.name, "data_type": t.code, "column_size": t.size, "nullable": 1,
			"case_sensitive": t.code == 12, "searchable": 3, "fixed_prec_scale": t.fixed, "sql_data_type": t.code,
			"local_type_name": t.name, "num_prec_radix": nil}
		if t.code == 12 || t.code == 91 || t.code == 93 {
			r["literal_prefix"], r["literal_suffix"] = "'", "'"
		}
		if t.name == "numeric" {
			r["create_params"], r["minimum_scale"], r["maximum_scale"], r["num_prec_radix"] = []string{"precision", "scale"}, 0, 38, 10
		}
		rows = append(rows, r)
	}
	return s.records(schema_ref.XdbcTypeInfo, rows)
}

// catalogMatches reports whether a command's catalog filter admits ours.
func catalogMatches(c *string) bool { return c == nil || *c == "" || *c == engine.DatabaseName }

// likeMatcher matches names against a SQL LIKE pattern (% any run, _ any
// character, \ escapes); nil matches everything.
func likeMatcher(pattern *string) func(string) bool {
	if pattern == nil {
		return func(string) bool { return true }
	}
	var re strings.Builder
	re.WriteString(`(?s)^`)
	rs := []rune(*pattern)
	for i := 0; i < len(rs); i++ {
		switch r := rs[i]; {
		case r == '\\' && i+1 < len(rs):
			i++
			re.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			re.WriteString(`.*`)
		case r == '_':
			re.WriteString(`.`)
		default:
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString(`$`)
	m := regexp.MustCompile(re.String())
	return m.MatchString
}

// likeEscape is the LIKE pattern matching exactly s.
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

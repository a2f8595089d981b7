package pgcatalog

import "strings"

// EmulationSchema is the schema holding the emulation views and functions.
const EmulationSchema = "lakesoul_pg"

// emulatedRelations maps "<schema>.<relation>" of a real catalog object to
// the lakesoul_pg view that replaces it. Each view has the real object's
// columns (see the migration).
var emulatedRelations = map[string]string{
	"pg_catalog.pg_namespace":   "pg_namespace",
	"pg_catalog.pg_class":       "pg_class",
	"pg_catalog.pg_attribute":   "pg_attribute",
	"pg_catalog.pg_index":       "pg_index",
	"pg_catalog.pg_constraint":  "pg_constraint",
	"pg_catalog.pg_attrdef":     "pg_attrdef",
	"pg_catalog.pg_description": "pg_description",
	"pg_catalog.pg_type":        "pg_type",
	"pg_catalog.pg_proc":        "pg_proc",
	"pg_catalog.pg_trigger":     "pg_trigger",
	"pg_catalog.pg_policy":      "pg_policy",
	"pg_catalog.pg_tables":      "pg_tables",
	"pg_catalog.pg_indexes":     "pg_indexes",
	"pg_catalog.pg_views":       "pg_views",
	"pg_catalog.pg_sequences":   "pg_sequences",
	"pg_catalog.pg_rewrite":     "pg_rewrite",  // migration 000017 (pg_dump)
	"pg_catalog.pg_sequence":    "pg_sequence", // migration 000021 (lake sequences)
	"pg_catalog.pg_depend":      "pg_depend",
	"pg_catalog.pg_enum":        "pg_enum", // migration 000019 (enum types)
	// migration 000028 (catalog facts): the one database served, the
	// sessions' settings only, lake tables' statistics
	"pg_catalog.pg_database":         "pg_database",
	"pg_catalog.pg_settings":         "pg_settings",
	"pg_catalog.pg_stat_user_tables": "pg_stat_user_tables",
	"pg_catalog.pg_stat_all_tables":  "pg_stat_all_tables",

	"information_schema.schemata":          "info_schemata",
	"information_schema.tables":            "info_tables",
	"information_schema.columns":           "info_columns",
	"information_schema.table_constraints": "info_table_constraints",
	"information_schema.key_column_usage":  "info_key_column_usage",
	"information_schema.views":             "info_views",
}

// emulatedFunctions maps a pg_catalog function name to the argument counts
// for which lakesoul_pg has a function of the same name and signature.
var emulatedFunctions = map[string][]int{
	"pg_table_is_visible":    {1},
	"pg_get_indexdef":        {1, 3},
	"pg_get_constraintdef":   {1, 2},
	"obj_description":        {1, 2},
	"col_description":        {2},
	"pg_relation_size":       {1, 2},
	"pg_table_size":          {1},
	"pg_total_relation_size": {1},
	"pg_indexes_size":        {1},
	"current_schema":         {0},
	"current_schemas":        {1},
	"pg_get_viewdef":         {1, 2}, // migration 000017 (pg_dump)
	"format_type":            {2},    // migration 000019 (enum types)
	"pg_type_is_visible":     {1},
	"pg_get_expr":            {2, 3}, // migration 000021 (lake defaults are text)
	// sqlfuncs/170_pg_names.sql: names of lake objects (regnames.go).
	"to_regclass":            {1},
	"to_regtype":             {1},
	"to_regnamespace":        {1},
	"pg_get_serial_sequence": {2},
	"has_schema_privilege":   {2, 3},
	"pg_show_all_settings":   {0}, // migration 000028 (the catalog server's own settings hidden)
	"current_setting":        {1, 2},
}

// IsCatalogRelation reports whether a relation reference names a PostgreSQL
// system catalog object: anything in schema pg_catalog or information_schema,
// or an unqualified name starting with "pg_" (resolved in pg_catalog, which
// PostgreSQL searches first). Names are as the parser returns them (unquoted
// identifiers already folded to lower case). A query whose relations all
// satisfy it is answered by the catalog database (after Rewrite).
func IsCatalogRelation(schema, name string) bool {
	switch schema {
	case "pg_catalog", "information_schema":
		return true
	case "":
		return strings.HasPrefix(name, "pg_")
	}
	return false
}

// emulationFor returns the lakesoul_pg view replacing the relation, if any.
func emulationFor(schema, name string) (string, bool) {
	if schema == "" {
		if !strings.HasPrefix(name, "pg_") {
			return "", false
		}
		schema = "pg_catalog"
	}
	v, ok := emulatedRelations[schema+"."+name]
	return v, ok
}

// hasEmulatedFunction reports whether lakesoul_pg replaces the pg_catalog
// function name called with nargs arguments.
func hasEmulatedFunction(name string, nargs int) bool {
	for _, n := range emulatedFunctions[name] {
		if n == nargs {
			return true
		}
	}
	return false
}

// The PostgreSQL face names LakeSoul's default namespace "public", the
// schema every PostgreSQL user and tool starts in, while the LakeSoul
// catalog (its tables, LakeSoul's own clients, lakesoul.* functions) keeps
// "default". The mapping is applied wherever a name crosses between the
// two: a schema name a statement writes becomes a namespace with Namespace,
// a namespace shown to a PostgreSQL client becomes a schema name with
// SchemaName (and lakesoul_pg.pg_schema_name in the catalog views,
// migration 27). No namespace may be called "public"
// (lakesoul.guard_namespace_name), so the two are one to one; "default"
// written as a schema name still means the default namespace, as text
// stored before this naming spells it.
const (
	// PublicSchema is the default namespace's name on the PostgreSQL face.
	PublicSchema = "public"
	// DefaultNamespace is LakeSoul's default namespace (catalog.DefaultNamespace).
	DefaultNamespace = "default"
)

// SchemaName is the PostgreSQL name of LakeSoul namespace ns.
func SchemaName(ns string) string {
	if ns == DefaultNamespace {
		return PublicSchema
	}
	return ns
}

// Namespace is the LakeSoul namespace PostgreSQL schema name schema means
// ("" stays "": no schema written).
func Namespace(schema string) string {
	if schema == PublicSchema {
		return DefaultNamespace
	}
	return schema
}

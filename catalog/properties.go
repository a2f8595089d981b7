package catalog

import (
	"fmt"
	"strings"

	"github.com/lakesoul-go/lakesoul/schema"
)

// Table properties the server writes itself.
//
// A table's properties (table_info.properties) hold options its users set
// (CREATE TABLE … WITH, ALTER TABLE … SET/RESET: merge operators, TTLs, the
// CDC column, LakeSoul's other options) beside keys the server writes for
// its own statements: CHECK constraints, comments, the key and buckets,
// dropped columns. InternalProperties is the one list of the latter: the
// server's writers name their keys by its constants, the engine refuses
// every key it matches as a user option, and ApplyFunctions installs it in
// the catalog (lakesoul.internal_property), where a trigger refuses the
// ServerOnly keys from any login but the server's — a workspace user
// connected to the catalog directly, as LakeSoul's clients are, cannot
// store a CHECK expression the server never validated.

// Keys of InternalProperties.
const (
	// CheckPropertyPrefix + name holds a CHECK constraint's condition,
	// PostgreSQL expression text (engine/checks.go).
	CheckPropertyPrefix = "pg_check."
	// CommentProperty is COMMENT ON TABLE's text; CommentProperty + "." +
	// column is COMMENT ON COLUMN's (engine/comment.go).
	CommentProperty = "comment"
	// DroppedColumnProperty lists the names dropped columns had (LakeSoul's
	// key): data files may still hold them.
	DroppedColumnProperty = "droppedColumn"
	// HashBucketNumProperty and HashPartitionsProperty are LakeSoul's
	// bucket count and hash key of a primary-key table.
	HashBucketNumProperty  = "hashBucketNum"
	HashPartitionsProperty = "hashPartitions"
	// DomainProperty is LakeSoul's workspace key, kept by lakesoul.alter_table.
	DomainProperty = "domain"
	// SchemaChangeProperty is stamped by lakesoul.alter_table on a schema change.
	SchemaChangeProperty = "last_schema_change_time"
)

// InternalProperty is a table property key, or a prefix of keys (ending in
// "."), that only the server's own statements write.
type InternalProperty struct {
	Key string
	// ServerOnly: no LakeSoul client writes it either, so the catalog refuses
	// it from every login but the server's. Keys LakeSoul's clients write too
	// (its bucket and key properties, dropped columns) are refused only as
	// user options of SQL statements.
	ServerOnly bool
	// Use names the statement that sets it, for the error's hint.
	Use string
}

// InternalProperties is the one list of internal property keys and prefixes.
var InternalProperties = []InternalProperty{
	{CheckPropertyPrefix, true, "CHECK constraints are added by CREATE TABLE … CHECK (…) and dropped by ALTER TABLE … DROP CONSTRAINT"},
	{CommentProperty, false, "COMMENT ON TABLE … IS '…'"},
	{CommentProperty + ".", false, "COMMENT ON COLUMN … IS '…'"},
	{DroppedColumnProperty, false, "ALTER TABLE … DROP COLUMN"},
	{HashBucketNumProperty, false, "CREATE TABLE … WITH (hash_bucket_num = N); CALL lakesoul.compact(…, new_bucket_num => N)"},
	{HashPartitionsProperty, false, "the PRIMARY KEY of CREATE TABLE"},
	{DomainProperty, false, "the workspace of the table's schema"},
	{SchemaChangeProperty, false, "ALTER TABLE"},
}

// InternalPropertyOf returns the entry of InternalProperties key matches.
func InternalPropertyOf(key string) (InternalProperty, bool) {
	for _, p := range InternalProperties {
		if key == p.Key || strings.HasSuffix(p.Key, ".") && strings.HasPrefix(key, p.Key) {
			return p, true
		}
	}
	return InternalProperty{}, false
}

// internalKeyFunctions is the SQL that installs InternalProperties'
// ServerOnly entries and schema.InternalMetadata in the catalog:
// lakesoul.internal_property(key) and lakesoul.internal_column_key(key),
// which lakesoul.guard_internal_keys (sqlfuncs/170_namespace_rights.sql)
// asks. ApplyFunctions runs it after the sqlfuncs, on every start, so the
// catalog's list is always the binary's.
func internalKeyFunctions() string {
	var exact, prefixes []string
	for _, p := range InternalProperties {
		if !p.ServerOnly {
			continue
		}
		if strings.HasSuffix(p.Key, ".") {
			prefixes = append(prefixes, p.Key)
		} else {
			exact = append(exact, p.Key)
		}
	}
	return fmt.Sprintf(`
CREATE OR REPLACE FUNCTION lakesoul.internal_property(p_key text)
RETURNS boolean LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog AS $$
    SELECT p_key = ANY (%s::text[]) OR EXISTS (SELECT 1 FROM unnest(%s::text[]) p WHERE starts_with(p_key, p))
$$;
CREATE OR REPLACE FUNCTION lakesoul.internal_column_key(p_key text)
RETURNS boolean LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog AS $$
    SELECT p_key = ANY (%s::text[])
$$;
`, sqlTextArray(exact), sqlTextArray(prefixes), sqlTextArray(schema.InternalMetadata))
}

// sqlTextArray is a text[] literal of vals.
func sqlTextArray(vals []string) string {
	quoted := make([]string, len(vals))
	for i, v := range vals {
		quoted[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
	}
	return "ARRAY[" + strings.Join(quoted, ", ") + "]"
}

// Package catalog is the Go client of the LakeSoul catalog in PostgreSQL.
//
// It reads LakeSoul's metadata tables and calls the SQL functions of sqlfuncs;
// it never implements commit logic itself (the commit protocol lives once, in
// sqlfuncs). All methods are safe for concurrent use.
package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/schema"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// DefaultNamespace is LakeSoul's default namespace, created by the migrations.
const DefaultNamespace = "default"

// CDCColumnProperty is LakeSoul's table property naming a CDC table's op
// column; its values are insert, update and delete.
const CDCColumnProperty = "lakesoul_cdc_change_column"

// CDCColumn returns the table's CDC op column, or "".
func (t *Table) CDCColumn() string { return t.Properties[CDCColumnProperty] }

// Catalog is a connection pool to the catalog database.
type Catalog struct {
	pool *pgxpool.Pool
	// owner is the role the pool connects as; role is the role this
	// handle's calls run as ("" = the owner, see role.go).
	owner string
	role  string
	// users are the pools of user logins (userconn.go), shared by every
	// handle of the catalog.
	users *userPools
	// snap, on a handle from InSnapshot, is the read-only transaction every
	// call of the handle runs in (snapshot.go).
	snap pgx.Tx
	// pinned, when set, is the held transaction every call of the handle
	// runs in (held.go); held is its HeldTx.
	pinned pgx.Tx
	held   *HeldTx
	// notifier sends the notices of committed versions (commitnotify.go),
	// shared by every handle of the catalog.
	notifier *commitNotifier
}

// Open connects to the catalog. Migrations must already be applied.
func Open(ctx context.Context, url string) (*Catalog, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("catalog url: %w", err)
	}
	// Sessions hold a connection per open catalog portal and commits wait on
	// partition locks: the default (max(4, CPUs)) would cap concurrency.
	if cfg.MaxConns < 32 && !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = 32
	}
	cfg.AfterConnect = afterConnect // retry.go
	// Every catalog connection (the pool's, the user pools' and those dialed
	// from Pool().Config()) marks its network errors, so that sqlerr maps a
	// lost catalog to 08006 whichever call site it interrupts.
	cfg.ConnConfig.DialFunc = sqlerr.CatalogDialer(cfg.ConnConfig.DialFunc)
	cfg.ConnConfig.BuildContextWatcherHandler = cancelRequestHandler
	base := cfg.Copy()
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect catalog: %w", err)
	}
	var owner string
	if err := pool.QueryRow(ctx, "SELECT current_user").Scan(&owner); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect catalog: %w", err)
	}
	return &Catalog{pool: pool, owner: owner, users: newUserPools(base), notifier: &commitNotifier{}}, nil
}

// Close closes the pool and the user pools.
func (c *Catalog) Close() {
	c.users.closeAll()
	c.pool.Close()
}

// Pool exposes the pool for callers that run catalog SQL (pg_catalog
// emulation, administration functions). Its connections log in as the owner,
// whatever the handle's role: a caller acting for a user switches roles itself.
func (c *Catalog) Pool() *pgxpool.Pool { return c.pool }

// Table is a lake table as the catalog describes it.
type Table struct {
	ID        string
	Namespace string
	Name      string
	// Path is the table root URI (file:///… or s3://…).
	Path string
	// Dir is the table's directory as recorded in the catalog
	// (lakesoul.table_dir, migration 18), "" for a table without a record
	// (created before renames existed): its directory then follows from its
	// names (layout.CheckRecordedDir).
	Dir    string
	Schema *arrow.Schema
	// RangeCols are the range-partition columns, in order; they are not stored
	// in data files but injected from partition_desc on read.
	RangeCols []string
	// PKCols are the primary-key columns in declaration order; empty for an
	// append (non-PK) table.
	PKCols []string
	// HashBucketNum is the bucket count of a PK table, -1 otherwise.
	HashBucketNum int
	Properties    map[string]string
	Domain        string
	// OID is the stable PostgreSQL-style OID clients see for the table.
	OID uint32
	// IndexedCols are the columns some column index names (columnindex.go),
	// sorted and distinct: data files written for the table carry a bloom
	// filter for each, and reads prune by them.
	IndexedCols []string
	// Enums are the enum types of the table's enum columns by OID
	// (enum.go), as of the table's loading; a type the role does not see
	// is missing.
	Enums map[uint32]*Enum
}

// HasPK reports whether the table is a primary-key (upsert, merge-on-read) table.
func (t *Table) HasPK() bool { return len(t.PKCols) > 0 }

// QualifiedName is "namespace.name".
func (t *Table) QualifiedName() string { return t.Namespace + "." + t.Name }

// CreateNamespace creates a namespace in domain "public".
func (c *Catalog) CreateNamespace(ctx context.Context, name string) error {
	return c.CreateNamespaceIn(ctx, name, "public")
}

// NamespaceExists reports whether a namespace exists.
func (c *Catalog) NamespaceExists(ctx context.Context, name string) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM public.namespace WHERE namespace = $1)", name).Scan(&ok)
	})
	return ok, err
}

// Namespaces lists the namespaces the handle's role sees, by name.
func (c *Catalog) Namespaces(ctx context.Context) ([]string, error) {
	var out []string
	err := c.run(ctx, func(q querier) error {
		out = out[:0]
		rows, err := q.Query(ctx, "SELECT namespace FROM public.namespace ORDER BY namespace")
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var ns string
			if err := rows.Scan(&ns); err != nil {
				return err
			}
			out = append(out, ns)
		}
		return rows.Err()
	})
	return out, err
}

// DropNamespace drops a namespace; with cascade also its tables, whose paths
// are returned, once the drop committed, so the caller can remove their files.
func (c *Catalog) DropNamespace(ctx context.Context, name string, cascade bool) ([]string, error) {
	var paths []string
	err := c.run(ctx, func(q querier) error {
		rows, err := q.Query(ctx, "SELECT * FROM lakesoul.drop_namespace($1, $2)", name, cascade)
		if err != nil {
			return err
		}
		paths, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return nil, err
	}
	return paths, nil
}

// CreateTable registers t and records its directory. t.ID must be set
// ("table_" + UUID) and t.Path be the directory of t's names; when another
// table uses that directory (a renamed table keeps its old name's), t gets
// a fresh sibling directory <path>_<8 hex digits> (lakesoul.free_table_dir),
// set in t.Path and t.Dir.
func (c *Catalog) CreateTable(ctx context.Context, t *Table) error {
	schemaJSON, err := schema.FormatTableSchema(t.Schema)
	if err != nil {
		return sqlerr.Wrap(sqlerr.FeatureNotSupported, err, "unsupported column type")
	}
	props := map[string]string{}
	for k, v := range t.Properties {
		props[k] = v
	}
	props[HashBucketNumProperty] = strconv.Itoa(t.HashBucketNum)
	if t.HasPK() {
		props[HashPartitionsProperty] = strings.Join(t.PKCols, ",")
	}
	propsJSON, err := json.Marshal(props)
	if err != nil {
		return err
	}
	partitions := layout.FormatPartitions(t.RangeCols, t.PKCols)
	want := t.Path
	return c.run(ctx, func(q querier) error {
		var path string
		if err := q.QueryRow(ctx, "SELECT lakesoul.free_table_dir($1)", want).Scan(&path); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, "SELECT lakesoul.create_table($1, $2, $3, $4, $5, $6, $7)",
			t.ID, t.Namespace, t.Name, path, schemaJSON, string(propsJSON), partitions); err != nil {
			return err
		}
		if _, err := q.Exec(ctx, "SELECT lakesoul.record_table_dir($1)", t.ID); err != nil {
			return err
		}
		t.Path, t.Dir = path, path
		return nil
	})
}

const tableColumns = `t.table_id, t.table_namespace, coalesce(t.table_name, ''), t.table_path, t.table_schema,
	coalesce(t.properties::text, '{}'), coalesce(t.partitions, ';'), coalesce(t.domain, 'public'), coalesce(o.oid, 0),
	ARRAY(SELECT DISTINCT c FROM lakesoul.column_index ci, unnest(ci.columns) c WHERE ci.table_id = t.table_id ORDER BY c),
	coalesce((SELECT d.dir FROM lakesoul.table_dir d WHERE d.table_id = t.table_id), ''),
	` + enumColumns

func scanTable(row pgx.Row) (*Table, error) {
	var (
		t                                    Table
		schemaJSON, props, partitions, enums string
		oid                                  int64
	)
	if err := row.Scan(&t.ID, &t.Namespace, &t.Name, &t.Path, &schemaJSON, &props, &partitions, &t.Domain, &oid, &t.IndexedCols, &t.Dir, &enums); err != nil {
		return nil, err
	}
	var err error
	if t.Enums, err = parseEnums(enums); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.ID, err)
	}
	t.OID = uint32(oid)
	s, err := schema.ParseTableSchema(schemaJSON)
	if err != nil {
		// Another LakeSoul engine may have written a schema this server
		// cannot read (a type it does not store): the table is refused by
		// name, never read wrongly.
		return nil, &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: fmt.Sprintf("table %s.%s has a schema this server cannot read", t.Namespace, t.Name),
			Detail:  err.Error(), Hint: "Supported column types are those CREATE TABLE accepts; change the column with the engine that wrote it.",
			Err: err}
	}
	t.Schema = s
	if err := json.Unmarshal([]byte(props), &t.Properties); err != nil {
		return nil, fmt.Errorf("table %s properties: %w", t.ID, err)
	}
	if t.RangeCols, t.PKCols, err = layout.ParsePartitions(partitions); err != nil {
		return nil, fmt.Errorf("table %s: %w", t.ID, err)
	}
	t.HashBucketNum = -1
	if v, ok := t.Properties[HashBucketNumProperty]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			t.HashBucketNum = n
		}
	}
	if t.HasPK() && t.HashBucketNum < 1 {
		t.HashBucketNum = 1
	}
	return &t, nil
}

func splitNonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// TableByName looks a table up; a missing one is 42P01. Only a table row
// that carries the name looked up is found: table_name_id maps names to ids
// and its key makes each name unique, but a table_info row may be written
// with any namespace and name, and the table's directory (and so which files
// it may touch, layout.CheckTableDir) follows from those.
func (c *Catalog) TableByName(ctx context.Context, namespace, name string) (*Table, error) {
	t, err := c.readOneTable(ctx, `SELECT `+tableColumns+`
			FROM public.table_name_id n
			JOIN public.table_info t ON t.table_id = n.table_id
			     AND t.table_namespace = n.table_namespace AND t.table_name = n.table_name
			LEFT JOIN lakesoul.table_oid o ON o.table_id = t.table_id
			WHERE n.table_namespace = $1 AND n.table_name = $2`, namespace, name)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", namespace, name)
	}
	return t, err
}

// TableByID looks a table up by id; a missing one is 42P01.
func (c *Catalog) TableByID(ctx context.Context, id string) (*Table, error) {
	t, err := c.readOneTable(ctx, `SELECT `+tableColumns+`
			FROM public.table_info t
			LEFT JOIN lakesoul.table_oid o ON o.table_id = t.table_id
			WHERE t.table_id = $1`, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "table %s does not exist", id)
	}
	return t, err
}

// NamedTableByID looks a table up by id, as the handle's role, and finds
// it only as TableByName would: its row carries a namespace and name that
// table_name_id maps to this id. A missing table, one the role may not see
// and a table known only by its path (LakeSoul allows those) are 42P01.
// Code that acts on a table by id — maintenance calls, imports, compaction
// jobs — loads it so, never by reading table_info itself.
func (c *Catalog) NamedTableByID(ctx context.Context, id string) (*Table, error) {
	t, err := c.readOneTable(ctx, `SELECT `+tableColumns+`
			FROM public.table_info t
			JOIN public.table_name_id n ON n.table_id = t.table_id
			     AND n.table_namespace = t.table_namespace AND n.table_name = t.table_name
			LEFT JOIN lakesoul.table_oid o ON o.table_id = t.table_id
			WHERE t.table_id = $1`, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "table %s does not exist", id)
	}
	return t, err
}

// readOneTable reads the one table row query returns; pgx.ErrNoRows when
// there is none.
func (c *Catalog) readOneTable(ctx context.Context, query string, args ...any) (*Table, error) {
	var t *Table
	err := c.read(ctx, func(rows pgx.Rows) error {
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return err
			}
			return pgx.ErrNoRows
		}
		var err error
		t, err = scanTable(rows)
		return err
	}, query, args...)
	return t, err
}

// Tables lists the tables of a namespace ("" = all), ordered by namespace, name.
func (c *Catalog) Tables(ctx context.Context, namespace string) ([]*Table, error) {
	var out []*Table
	err := c.run(ctx, func(q querier) error {
		out = nil
		rows, err := q.Query(ctx, `SELECT `+tableColumns+`
			FROM public.table_info t
			LEFT JOIN lakesoul.table_oid o ON o.table_id = t.table_id
			WHERE $1 = '' OR t.table_namespace = $1
			ORDER BY t.table_namespace, t.table_name`, namespace)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			t, err := scanTable(rows)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DropTable removes a table's metadata and returns its path once that
// committed; the caller removes the files afterwards (a crash in between
// leaves orphans, never a half table). On error nothing may be deleted.
func (c *Catalog) DropTable(ctx context.Context, namespace, name string) (string, error) {
	var path string
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.drop_table($1, $2)", namespace, name).Scan(&path)
	})
	if err != nil {
		return "", err
	}
	return path, nil
}

// AlterTable stores t's schema and properties (hashBucketNum and
// hashPartitions are kept in step with the table's key).
func (c *Catalog) AlterTable(ctx context.Context, t *Table) error {
	schemaJSON, propsJSON, err := tableDefinitionJSON(t)
	if err != nil {
		return err
	}
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.alter_table($1, $2, $3::jsonb)", t.ID, schemaJSON, propsJSON)
		return err
	})
}

// tableDefinition is lakesoul.alter_table's schema and properties for t
// (hashBucketNum kept in step with the table's key).
func tableDefinition(t *Table) (schemaJSON string, props map[string]string, err error) {
	schemaJSON, err = schema.FormatTableSchema(t.Schema)
	if err != nil {
		return "", nil, sqlerr.Wrap(sqlerr.FeatureNotSupported, err, "unsupported column type")
	}
	props = map[string]string{}
	for k, v := range t.Properties {
		props[k] = v
	}
	props[HashBucketNumProperty] = strconv.Itoa(t.HashBucketNum)
	return schemaJSON, props, nil
}

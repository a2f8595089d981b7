package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Catalog reads of the S3 proxy (s3proxy): access keys, and which tables
// and namespaces object paths belong to and a key's role sees. They run on
// the owner's pool (the proxy's catalog connection is the owner's or a
// superuser's, CheckObjectAccess); what a role sees is read under that role.

// TablePath is a table's root path as table_path_id records it (any of
// LakeSoul's spellings: s3://, s3a://, s3n://, with or without a trailing
// slash) and its namespace.
type TablePath struct {
	Path, Namespace string
}

// ObjectAccess is what the catalog says about a request's object paths.
type ObjectAccess struct {
	// All are the tables whose root is one of the paths asked about, or
	// lies under one of the prefixes; Visible those of them the role sees.
	All, Visible []TablePath
	// VisibleNamespaces are the namespaces asked about that the role sees
	// (nil when none were asked about).
	VisibleNamespaces map[string]bool
}

const (
	qTablesByPath = `SELECT table_path, table_namespace FROM public.table_path_id WHERE table_path = ANY($1::text[])`
	// Tables a list of one of the prefixes could reach.
	qTablesUnder = `SELECT t.table_path, t.table_namespace FROM public.table_path_id t
		WHERE EXISTS (SELECT 1 FROM unnest($1::text[]) AS p(prefix)
		               WHERE starts_with(regexp_replace(rtrim(t.table_path, '/'), '^s3[an]?://', 's3://') || '/', p.prefix))`
	qNamespaces = `SELECT namespace FROM public.namespace WHERE namespace = ANY($1::text[])`
)

// ObjectAccessOf reads, in one round trip and one transaction, the tables
// whose root path is one of paths or lies under one of prefixes (s3:// path
// prefixes ending in "/"), first as the owner (All) and then as role
// (Visible), and which of namespaces role sees. It never answers with the
// owner's eyes for role: when the switch to role did not take, it fails.
func (c *Catalog) ObjectAccessOf(ctx context.Context, role string, paths, prefixes, namespaces []string) (ObjectAccess, error) {
	var a ObjectAccess
	var current string
	b := &pgx.Batch{}
	scanTables := func(dst *[]TablePath) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			for rows.Next() {
				var t TablePath
				if err := rows.Scan(&t.Path, &t.Namespace); err != nil {
					return err
				}
				*dst = append(*dst, t)
			}
			return rows.Err()
		}
	}
	queueTables := func(dst *[]TablePath) {
		b.Queue(qTablesByPath, paths).Query(scanTables(dst))
		if len(prefixes) > 0 {
			b.Queue(qTablesUnder, prefixes).Query(scanTables(dst))
		}
	}
	queueTables(&a.All) // as the catalog owner: every table
	b.Queue("SELECT set_config('role', $1, true)", role).Exec(func(pgconn.CommandTag) error { return nil })
	b.Queue("SELECT current_user::text").QueryRow(func(r pgx.Row) error { return r.Scan(&current) })
	queueTables(&a.Visible) // as the key's role: the tables it sees
	if len(namespaces) > 0 {
		a.VisibleNamespaces = map[string]bool{}
		b.Queue(qNamespaces, namespaces).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var ns string
				if err := rows.Scan(&ns); err != nil {
					return err
				}
				a.VisibleNamespaces[ns] = true
			}
			return rows.Err()
		})
	}
	if err := c.pool.SendBatch(ctx, b).Close(); err != nil {
		return ObjectAccess{}, err
	}
	if current != role {
		return ObjectAccess{}, fmt.Errorf("catalog lookup ran as %q, not as the key's role %q", current, role)
	}
	return a, nil
}

// ErrUnknownAccessKey is AccessKey's error for an id that names no active
// access key.
var ErrUnknownAccessKey = errors.New("no such access key")

// AccessKey returns the secret and role of the active access key id (read
// as the owner: the table is readable by nobody else).
func (c *Catalog) AccessKey(ctx context.Context, id string) (secret, role string, err error) {
	err = c.pool.QueryRow(ctx,
		"SELECT secret_access_key, role_name FROM lakesoul.access_key WHERE access_key_id = $1 AND revoked_at IS NULL",
		id).Scan(&secret, &role)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", ErrUnknownAccessKey
	}
	return secret, role, err
}

// CheckObjectAccess reports whether the catalog has access keys (migrated)
// and whether its connection sees every table (owner: the catalog owner's
// role, a superuser or a role that bypasses row-level security), as the S3
// proxy needs.
func (c *Catalog) CheckObjectAccess(ctx context.Context) (migrated, owner bool, err error) {
	err = c.pool.QueryRow(ctx, `SELECT to_regclass('lakesoul.access_key') IS NOT NULL,
		(SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user)
		OR pg_has_role(current_user, (SELECT relowner FROM pg_class WHERE oid = 'public.table_path_id'::regclass), 'USAGE')`).
		Scan(&migrated, &owner)
	return migrated, owner, err
}

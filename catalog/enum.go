package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Enum types of lake namespaces live in the catalog PostgreSQL (migration
// 19, sqlfuncs/150_enums.sql): every call runs as the handle's role, so
// row-level security decides which types it sees and changes. A column of
// an enum type is a string column with pg_type "enum:<oid>" (schema.EnumOID).

// Enum is an enum type: its labels in their order (PostgreSQL's
// enumsortorder), which is the order of its values.
type Enum struct {
	OID       uint32
	Namespace string
	Name      string
	Labels    []string
	// Former maps names labels had before RENAME VALUE to the labels:
	// data files written before a rename hold the former name.
	Former map[string]string
}

// QualifiedName is "namespace.name".
func (e *Enum) QualifiedName() string { return e.Namespace + "." + e.Name }

// Has reports whether label is a value of the type.
func (e *Enum) Has(label string) bool { return slices.Contains(e.Labels, label) }

// Rank is label's position in the type's order, -1 for no label.
func (e *Enum) Rank(label string) int { return slices.Index(e.Labels, label) }

// EnumDependent is a column declared with an enum type.
type EnumDependent struct {
	TableID, Namespace, Table, Column string
}

// enumColumns is the table column (see tableColumns) with the enum types
// its schema's columns name, as JSON {"<oid>": {"ns", "name", "labels"}}:
// loaded with the table, so a statement sees the labels as of its
// resolution. Types the role does not see are missing.
const enumColumns = `coalesce((SELECT jsonb_object_agg(et.oid::text, jsonb_build_object('ns', et.namespace, 'name', et.name,
		'labels', coalesce((SELECT jsonb_agg(l.label ORDER BY l.sort_order) FROM lakesoul.enum_label l WHERE l.type_oid = et.oid), '[]'),
		'former', coalesce((SELECT jsonb_object_agg(f, l.label) FROM lakesoul.enum_label l, unnest(l.former) f WHERE l.type_oid = et.oid), '{}')))
	FROM lakesoul.enum_type et
	WHERE t.table_schema LIKE '%"enum:%' AND strpos(t.table_schema, '"enum:' || et.oid || '"') > 0), '{}')::text`

type enumJSON struct {
	NS     string            `json:"ns"`
	Name   string            `json:"name"`
	Labels []string          `json:"labels"`
	Former map[string]string `json:"former"`
}

// parseEnums reads enumColumns' value.
func parseEnums(s string) (map[uint32]*Enum, error) {
	var m map[string]enumJSON
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("enum types: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[uint32]*Enum, len(m))
	for k, v := range m {
		var oid uint32
		if _, err := fmt.Sscan(k, &oid); err != nil {
			return nil, fmt.Errorf("enum type oid %q: %w", k, err)
		}
		out[oid] = &Enum{OID: oid, Namespace: v.NS, Name: v.Name, Labels: v.Labels, Former: v.Former}
	}
	return out, nil
}

// CreateEnum creates enum type name in namespace with labels in order
// (42710 when it exists, 3F000 for a namespace the role does not see).
func (c *Catalog) CreateEnum(ctx context.Context, namespace, name string, labels []string) (uint32, error) {
	var oid int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.create_enum($1, $2, $3)", namespace, name, labels).Scan(&oid)
	})
	return uint32(oid), err
}

// EnumByName finds a visible enum type; nil without an error when there is
// none.
func (c *Catalog) EnumByName(ctx context.Context, namespace, name string) (*Enum, error) {
	var (
		e   *Enum
		raw string
	)
	err := c.run(ctx, func(q querier) error {
		e = nil
		var oid int64
		err := q.QueryRow(ctx, `SELECT et.oid, coalesce((SELECT jsonb_agg(l.label ORDER BY l.sort_order)
				FROM lakesoul.enum_label l WHERE l.type_oid = et.oid), '[]')::text
			FROM lakesoul.enum_type et WHERE et.namespace = lakesoul.seq_namespace($1) AND et.name = $2`,
			namespace, name).Scan(&oid, &raw)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		e = &Enum{OID: uint32(oid), Namespace: namespace, Name: name}
		return json.Unmarshal([]byte(raw), &e.Labels)
	})
	return e, err
}

// AddEnumValue adds label to a type: at the end, or before or after
// neighbor (when not ""). With ifNotExists an existing label is no error.
func (c *Catalog) AddEnumValue(ctx context.Context, namespace, name, label string, ifNotExists bool, neighbor string, before bool) error {
	var nb *string
	if neighbor != "" {
		nb = &neighbor
	}
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.enum_add_value($1, $2, $3, $4, $5, $6)", namespace, name, label, ifNotExists, nb, before)
		return err
	})
}

// RenameEnumValue renames a label of a type.
func (c *Catalog) RenameEnumValue(ctx context.Context, namespace, name, oldLabel, newLabel string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.enum_rename_value($1, $2, $3, $4)", namespace, name, oldLabel, newLabel)
		return err
	})
}

// EnumDependents lists the columns of all lake tables declared with the
// enum type oid.
func (c *Catalog) EnumDependents(ctx context.Context, oid uint32) ([]EnumDependent, error) {
	var out []EnumDependent
	err := c.run(ctx, func(q querier) error {
		out = nil
		rows, err := q.Query(ctx, "SELECT table_id, table_namespace, table_name, column_name FROM lakesoul.enum_dependents($1)", int64(oid))
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var d EnumDependent
			if err := rows.Scan(&d.TableID, &d.Namespace, &d.Table, &d.Column); err != nil {
				return err
			}
			out = append(out, d)
		}
		return rows.Err()
	})
	return out, err
}

// DropEnum drops a type no column uses (2BP01 otherwise); false when the
// role sees none of that name.
func (c *Catalog) DropEnum(ctx context.Context, namespace, name string) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.drop_enum($1, $2)", namespace, name).Scan(&ok)
	})
	return ok, err
}

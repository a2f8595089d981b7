package catalog

import (
	"context"
	"encoding/json"

	"github.com/lakesoul-go/lakesoul/layout"
)

// AddPrimaryKey gives t, a table without a key that holds no rows, the key,
// schema and hash bucket count of the new definition t (lakesoul.add_primary_key:
// 0A000 once the table has committed any version, 42P16 when it has a key).
func (c *Catalog) AddPrimaryKey(ctx context.Context, t *Table) error {
	schemaJSON, propsJSON, err := tableDefinitionJSON(t)
	if err != nil {
		return err
	}
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.add_primary_key($1, $2, $3, $4::jsonb)",
			t.ID, layout.FormatPartitions(t.RangeCols, t.PKCols), schemaJSON, propsJSON)
		return err
	})
}

// tableDefinitionJSON is tableDefinition with the properties as JSON text.
func tableDefinitionJSON(t *Table) (schemaJSON, propsJSON string, err error) {
	schemaJSON, props, err := tableDefinition(t)
	if err != nil {
		return "", "", err
	}
	b, err := json.Marshal(props)
	if err != nil {
		return "", "", err
	}
	return schemaJSON, string(b), nil
}

// AddPrimaryKeyEmptying is AddPrimaryKey for a table that has rows: in the
// same transaction it empties every partition first
// (lakesoul.add_primary_key_emptying), for the caller to write the rows
// again under the key before that transaction commits.
func (c *Catalog) AddPrimaryKeyEmptying(ctx context.Context, t *Table) error {
	schemaJSON, propsJSON, err := tableDefinitionJSON(t)
	if err != nil {
		return err
	}
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.add_primary_key_emptying($1, $2, $3, $4::jsonb)",
			t.ID, layout.FormatPartitions(t.RangeCols, t.PKCols), schemaJSON, propsJSON)
		return err
	})
}

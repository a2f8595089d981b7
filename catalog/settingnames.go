package catalog

import (
	"context"
	"fmt"
	"strings"
)

// SettingNames returns the names (lower case) of the configuration
// parameters the catalog's PostgreSQL has, the parameters SET accepts
// besides custom ones ("prefix.name").
func (c *Catalog) SettingNames(ctx context.Context) (map[string]bool, error) {
	rows, err := c.pool.Query(ctx, "SELECT name FROM pg_catalog.pg_settings")
	if err != nil {
		return nil, fmt.Errorf("configuration parameter names: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[strings.ToLower(n)] = true
	}
	return out, rows.Err()
}

package cdc

import (
	"context"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// checkMySQL checks a MySQL/MariaDB source for CREATE SUBSCRIPTION.
func checkMySQL(ctx context.Context, conn string, databases []string) ([]sourceTable, error) {
	return nil, sqlerr.Unsupported("MySQL/MariaDB sources", "PostgreSQL publishers")
}

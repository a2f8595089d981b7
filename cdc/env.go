package cdc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/layout"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Env is what subscriptions need of the server.
type Env struct {
	// Catalog is the owner's handle: subscriptions hold secrets only the
	// owner reads, and the lake tables they write belong to the server.
	Catalog   *catalog.Catalog
	Store     objstore.Store
	Warehouse string
	Logger    *slog.Logger
	// Lease is how long a worker's claim on a subscription lasts without
	// renewal (default 15 s): another server takes over that long after one
	// died.
	Lease time.Duration
	// VerifyChecks, when set, fails (23514) when rows a batch wrote to a
	// table break its CHECK constraints (engine.Engine.VerifyChecks); the
	// batch then commits nothing and the subscription retries it, as a
	// PostgreSQL subscriber's apply worker does, until the constraint or
	// the source row changes. Tables a subscription creates have no checks;
	// a table made before it may.
	VerifyChecks func(ctx context.Context, t *catalog.Table, written []catalog.PartitionCommit) error
}

func (e *Env) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.Default()
	}
	return e.Logger
}

func (e *Env) lease() time.Duration {
	if e.Lease <= 0 {
		return 15 * time.Second
	}
	return e.Lease
}

// tableDir is the directory of lake table namespace.name.
func (e *Env) tableDir(namespace, name string) (string, error) {
	p, err := layout.TableDir(e.Warehouse, namespace, name)
	switch {
	case errors.Is(err, layout.ErrSegmentTooLong):
		return "", sqlerr.Wrap(sqlerr.NameTooLong, err, fmt.Sprintf("name of table %s.%s is too long for a directory", namespace, name))
	case err != nil:
		return "", sqlerr.Wrap(sqlerr.InvalidName, err, fmt.Sprintf("table %s.%s cannot be given a directory", namespace, name))
	}
	return p, nil
}

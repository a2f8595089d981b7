package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// benchCatalog is a migrated catalog for the catalog benchmarks: the one at
// o.CatalogURL, or a private PostgreSQL cluster in o.Dir with PostgreSQL's
// default (durable) settings, stopped by close.
type benchCatalog struct {
	cat     *catalog.Catalog
	url     string
	cluster *pgcluster.Cluster
	// settings describes the server for the result rows.
	settings map[string]any
}

func openBenchCatalog(ctx context.Context, o Options, name string, maxConns int) (*benchCatalog, error) {
	b := &benchCatalog{url: o.CatalogURL}
	if b.url == "" {
		cl, err := pgcluster.Open(ctx, pgcluster.Options{
			DataDir: filepath.Join(o.Dir, name+"-pg"),
			Logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
			// Enough connections for 32 writers plus the pool's spares.
			Settings: map[string]string{"max_connections": "100"},
		})
		if err != nil {
			return nil, fmt.Errorf("%s: private catalog: %w", name, err)
		}
		b.cluster = cl
		if err := cl.CreateDatabase(ctx, "lakesoul_bench"); err != nil {
			b.close()
			return nil, err
		}
		b.url = cl.ConnString("lakesoul_bench")
	}
	if err := catalog.MigrateUp(ctx, b.url); err != nil {
		b.close()
		return nil, err
	}
	url := b.url
	if strings.Contains(url, "://") {
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += fmt.Sprintf("%spool_max_conns=%d", sep, maxConns)
	} else {
		url += fmt.Sprintf(" pool_max_conns=%d", maxConns)
	}
	cat, err := catalog.Open(ctx, url)
	if err != nil {
		b.close()
		return nil, err
	}
	b.cat = cat
	b.settings = map[string]any{"catalog": "private"}
	if o.CatalogURL != "" {
		b.settings["catalog"] = "external"
	}
	var version, syncCommit, fsync string
	if err := cat.Pool().QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('synchronous_commit'), current_setting('fsync')").
		Scan(&version, &syncCommit, &fsync); err == nil {
		b.settings["pg_version"] = version
		b.settings["synchronous_commit"] = syncCommit
		b.settings["fsync"] = fsync
	}
	return b, nil
}

func (b *benchCatalog) close() {
	if b.cat != nil {
		b.cat.Close()
	}
	if b.cluster != nil {
		b.cluster.Stop(context.Background())
	}
}

// extra merges the server description into a row's fields.
func (b *benchCatalog) extra(m map[string]any) map[string]any {
	for k, v := range b.settings {
		m[k] = v
	}
	return m
}

package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/compaction"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/vector"
)

// compactorCmd runs `lakesoul compactor`: compaction workers (and the
// lifecycle task) against a catalog, without a pgwire server. Any number of
// them may run against one catalog; they share the job queue.
func compactorCmd(args []string) error {
	fs := flag.NewFlagSet("compactor", flag.ExitOnError)
	url := fs.String("catalog-url", env("LAKESOUL_CATALOG_URL", ""), "catalog PostgreSQL URL [LAKESOUL_CATALOG_URL]")
	workers := fs.Int("workers", 1, "concurrent compactions")
	noMigrate := fs.Bool("no-migrate", false, "do not apply migrations to the catalog")
	warehouse := fs.String("warehouse", env("LAKESOUL_WAREHOUSE", ""), "the server's warehouse, s3://bucket/prefix or file:///path: tables are compacted and collected only in their directories there (default: local files, in each table's own directory) [LAKESOUL_WAREHOUSE]")
	s3Endpoint := fs.String("s3-endpoint", env("AWS_ENDPOINT_URL", ""), "S3-compatible endpoint URL [AWS_ENDPOINT_URL]")
	s3Region := fs.String("s3-region", env("AWS_REGION", ""), "S3 region [AWS_REGION]")
	lifecycle := fs.Duration("lifecycle-interval", time.Hour, "how often the TTL / discarded-file / orphan task runs (shared by all workers of the catalog; negative: never)")
	orphanGrace := fs.Duration("orphan-grace", 24*time.Hour, "age after which a data file no commit knows is deleted (negative: never)")
	logLevel := fs.String("log-level", env("LAKESOUL_LOG_LEVEL", "info"), "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return errors.New("compactor: --catalog-url is required")
	}
	log := newLogger(*logLevel)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !*noMigrate {
		if err := catalog.MigrateUp(ctx, *url); err != nil {
			return err
		}
	}
	cat, err := catalog.Open(ctx, *url)
	if err != nil {
		return err
	}
	defer cat.Close()
	var store objstore.Store = objstore.Local{}
	if *warehouse != "" {
		store, err = objstore.ForURIWith(ctx, *warehouse, objstore.Options{CheckBucket: true,
			S3: objstore.S3Options{Endpoint: *s3Endpoint, Region: *s3Region}})
		if err != nil {
			return fmt.Errorf("warehouse %s: %w", *warehouse, err)
		}
	}
	svc, err := compaction.Start(ctx, compaction.Config{Catalog: cat, Store: store, Workers: *workers,
		LifecycleInterval: *lifecycle, Lifecycle: compaction.LifecycleOptions{OrphanGrace: *orphanGrace},
		Options:         compaction.Options{Logger: log, Warehouse: *warehouse},
		AfterCompaction: (&vector.Builder{Cat: cat, Store: store, Log: log}).Rebuild})
	if err != nil {
		return err
	}
	<-ctx.Done()
	log.Info("shutting down")
	svc.Close()
	return nil
}

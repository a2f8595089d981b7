package main

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/s3proxy"
)

// s3proxyCmd runs the S3 proxy alone against a catalog: S3 clients sign
// with keys of lakesoul.create_access_key() and see the tables their role
// sees.
func s3proxyCmd(args []string) error {
	fs := flag.NewFlagSet("s3proxy", flag.ExitOnError)
	listen := fs.String("listen", env("LAKESOUL_S3PROXY_LISTEN", "127.0.0.1:6188"), "S3 endpoint address, host:port [LAKESOUL_S3PROXY_LISTEN]")
	url := fs.String("catalog-url", env("LAKESOUL_CATALOG_URL", ""), "catalog PostgreSQL URL, as the catalog owner [LAKESOUL_CATALOG_URL]")
	endpoint := fs.String("s3-endpoint", env("AWS_ENDPOINT_URL", ""), "the object store's S3 endpoint URL, addressed path-style; credentials from the standard AWS chain [AWS_ENDPOINT_URL]")
	region := fs.String("s3-region", env("AWS_REGION", ""), "the object store's region [AWS_REGION]")
	warehouse := fs.String("warehouse", env("LAKESOUL_WAREHOUSE", ""), "s3://bucket/prefix: roles may write <warehouse>/<namespace>/… paths of no table in namespaces they see (new tables); empty: only existing tables are writable [LAKESOUL_WAREHOUSE]")
	logLevel := fs.String("log-level", env("LAKESOUL_LOG_LEVEL", "info"), "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *url == "" {
		return errors.New("s3proxy: --catalog-url is required")
	}
	log := newLogger(*logLevel)
	slog.SetDefault(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cat, err := catalog.Open(ctx, *url)
	if err != nil {
		return err
	}
	defer cat.Close()
	backend, err := s3proxy.NewBackend(ctx, *endpoint, *region)
	if err != nil {
		return err
	}
	cfg := s3proxy.Config{Catalog: cat, Backend: backend, Logger: log}
	if *warehouse != "" {
		cfg.Warehouses = []string{*warehouse}
	}
	p, err := s3proxy.New(cfg)
	if err != nil {
		return err
	}
	if err := p.Check(ctx); err != nil {
		return err
	}
	srv, err := s3proxy.Listen(*listen, p)
	if err != nil {
		return err
	}
	log.Info("lakesoul s3proxy serving", "listen", srv.Addr().String(), "backend", backend.Endpoint, "warehouse", *warehouse)
	waitErr := make(chan error, 1)
	safego.Go(func() { waitErr <- safego.Call(srv.Wait) })
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-waitErr:
	}
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return errors.Join(err, srv.Shutdown(closeCtx))
}

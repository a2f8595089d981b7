package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheckCmd asks a server's metrics listener whether it serves: GET
// /readyz (catalog reachable, migrations current), or /healthz with --live.
// It exits 0 on 200 and 1 otherwise, so that a container's HEALTHCHECK
// needs no HTTP client in the image. The address is the server's own
// --metrics-listen (the same environment variable), a wildcard host asked
// on loopback.
func healthcheckCmd(args []string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ExitOnError)
	addr := fs.String("metrics-listen", env("LAKESOUL_METRICS_LISTEN", ""), "the server's metrics address (host:port) [LAKESOUL_METRICS_LISTEN]")
	live := fs.Bool("live", false, "ask /healthz (the process serves) instead of /readyz (it can serve queries)")
	timeout := fs.Duration("timeout", 5*time.Second, "give up after this long")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *addr == "" {
		return errors.New("healthcheck: no --metrics-listen (or LAKESOUL_METRICS_LISTEN): the server serves /readyz only with one")
	}
	target, err := loopbackTarget(*addr)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	path := "/readyz"
	if *live {
		path = "/healthz"
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+target+path, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	msg := strings.TrimSpace(string(body))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s %s: %s", path, resp.Status, msg)
	}
	fmt.Println(msg)
	return nil
}

// loopbackTarget turns a listen address into one to connect to: an empty
// or wildcard host (":9187", "0.0.0.0:9187", "[::]:9187") becomes loopback.
func loopbackTarget(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("metrics address %q: %w", addr, err)
	}
	switch ip := net.ParseIP(host); {
	case host == "" || (ip != nil && ip.Equal(net.IPv4zero)):
		host = "127.0.0.1"
	case ip != nil && ip.Equal(net.IPv6unspecified):
		host = "::1"
	}
	return net.JoinHostPort(host, port), nil
}

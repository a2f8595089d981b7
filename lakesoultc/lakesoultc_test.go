package lakesoultc

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
)

// TestOptionsNameServerSettings: every variable the options set is one
// `lakesoul serve` reads (its usage names each flag's variable), so that an
// option cannot silently configure nothing.
func TestOptionsNameServerSettings(t *testing.T) {
	req := testcontainers.GenericContainerRequest{}
	for _, o := range []testcontainers.CustomizeRequestOption{WithAdminPassword("pw"), WithCatalogURL("postgres://x@catalog/db"),
		WithS3Warehouse("s3://b/p", "http://s3:8333", "ak", "sk"), FromDockerfile("..")} {
		if err := o.Customize(&req); err != nil {
			t.Fatal(err)
		}
	}
	if req.FromDockerfile.Context != ".." || req.FromDockerfile.Dockerfile != "Dockerfile" {
		t.Errorf("FromDockerfile: %+v", req.FromDockerfile)
	}
	out, _ := exec.Command("go", "run", "../cmd/lakesoul", "serve", "-h").CombinedOutput()
	usage := string(out)
	if !strings.Contains(usage, "[LAKESOUL_DATA_DIR]") {
		t.Fatalf("lakesoul serve -h:\n%s", usage)
	}
	// The standard AWS chain reads these; serve names the endpoint and region.
	aws := map[string]bool{"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true}
	want := map[string]string{envAdminPassword: "pw", "LAKESOUL_CATALOG_URL": "postgres://x@catalog/db", "LAKESOUL_WAREHOUSE": "s3://b/p",
		"AWS_ENDPOINT_URL": "http://s3:8333", "AWS_ACCESS_KEY_ID": "ak", "AWS_SECRET_ACCESS_KEY": "sk", "AWS_REGION": "us-east-1"}
	for k, v := range want {
		if req.Env[k] != v {
			t.Errorf("%s = %q, want %q", k, req.Env[k], v)
		}
		if !aws[k] && !strings.Contains(usage, "["+k+"]") {
			t.Errorf("%s is not a setting of lakesoul serve", k)
		}
	}
	if len(req.Env) != len(want) {
		t.Errorf("env %v", req.Env)
	}
}

// TestRun builds the repository's image and runs it: the connection string
// logs in with the chosen password, SQL works, the metrics listener
// answers, and Docker reports the HEALTHCHECK healthy.
func TestRun(t *testing.T) {
	RequireDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	ctr, err := Run(ctx, "", FromDockerfile(root), WithAdminPassword("tc-Secret-1"))
	testcontainers.CleanupContainer(t, ctr)
	if err != nil {
		t.Fatal(err)
	}
	dsn, err := ctr.ConnectionString(ctx, "application_name=lakesoultc")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dsn, "lakesoul:tc-Secret-1@") || ctr.AdminPassword() != "tc-Secret-1" {
		t.Errorf("connection string %s", dsn)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"CREATE SCHEMA tc", "CREATE TABLE tc.t (id bigint PRIMARY KEY, v text)", "INSERT INTO tc.t VALUES (1, 'a'), (2, 'b')"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	var n int
	var app string
	// Two statements: one query may not read both lake tables and pg_catalog.
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM tc.t").Scan(&n); err != nil || n != 2 {
		t.Errorf("count %d: %v", n, err)
	}
	if err := conn.QueryRow(ctx, "SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()").Scan(&app); err != nil || app != "lakesoultc" {
		t.Errorf("application_name %q: %v", app, err)
	}
	base, err := ctr.MetricsURL(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `lakesoul_statements_total{kind="INSERT",sqlstate="00000"}`) {
		t.Errorf("/metrics lacks the INSERT:\n%s", body)
	}
	for {
		st, err := ctr.Inspect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.State != nil && st.State.Health != nil && st.State.Health.Status == "healthy" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the HEALTHCHECK never reported healthy: %+v", st.State)
		case <-time.After(time.Second):
		}
	}
}

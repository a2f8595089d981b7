// Package lakesoultc runs a LakeSoul-Go server in a container for
// integration tests, with testcontainers-go: the image of the repository's
// Dockerfile (built from a checkout with FromDockerfile, or any tag of it),
// its embedded default catalog unless WithCatalogURL names one.
//
//	ctr, err := lakesoultc.Run(ctx, "lakesoul:latest", lakesoultc.WithAdminPassword("secret"))
//	testcontainers.CleanupContainer(t, ctr)
//	if err != nil { t.Fatal(err) }
//	dsn, err := ctr.ConnectionString(ctx) // postgres://lakesoul:secret@host:port/lakesoul?sslmode=disable
//
// Run returns once the server's /readyz answers 200 (catalog reachable,
// migrations current) and its pgwire port accepts connections. A catalog
// URL or S3 endpoint must be reachable from inside the container (a
// container's 127.0.0.1 is its own). Tests that must also run where Docker
// is missing use package lakesoultest instead, or call RequireDocker: a
// skip without a Docker engine, a failure with LAKESOUL_REQUIRE_DOCKER=1.
package lakesoultc

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"time"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// The image's ports (its LAKESOUL_LISTEN and LAKESOUL_METRICS_LISTEN) and
// the names a connection string uses.
const (
	PGPort      = "5433/tcp"
	MetricsPort = "9187/tcp"
	Admin       = "lakesoul"
	Database    = "lakesoul"
)

// startupTimeout bounds the wait for /readyz: the first start of the
// embedded default runs initdb and the migrations.
const startupTimeout = 3 * time.Minute

// envAdminPassword is the image's variable for the admin role's password.
const envAdminPassword = "LAKESOUL_ADMIN_PASSWORD"

// Container is a running LakeSoul-Go server.
type Container struct {
	*testcontainers.DockerContainer
	password string
}

// Run starts img with opts (these and testcontainers' own options, such as
// testcontainers.WithEnv for any other LAKESOUL_* setting) and waits until
// it is ready. Without WithAdminPassword the admin password is random.
// On error the container, if one was created, is returned too, for the
// caller to terminate (testcontainers.CleanupContainer accepts nil).
func Run(ctx context.Context, img string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	pw := make([]byte, 12)
	if _, err := rand.Read(pw); err != nil {
		return nil, fmt.Errorf("lakesoultc: %w", err)
	}
	all := []testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(PGPort, MetricsPort),
		testcontainers.WithEnv(map[string]string{envAdminPassword: hex.EncodeToString(pw)}),
		// WithWaitStrategy alone would cap the whole wait at 60s.
		testcontainers.WithWaitStrategyAndDeadline(startupTimeout,
			wait.ForHTTP("/readyz").WithPort(MetricsPort).WithStartupTimeout(startupTimeout),
			wait.ForListeningPort(PGPort).WithStartupTimeout(startupTimeout)),
	}
	all = append(all, opts...)
	// Last: the password the options settled on, for ConnectionString.
	var password string
	all = append(all, testcontainers.CustomizeRequestOption(func(req *testcontainers.GenericContainerRequest) error {
		password = req.Env[envAdminPassword]
		return nil
	}))
	ctr, err := testcontainers.Run(ctx, img, all...)
	var c *Container
	if ctr != nil {
		c = &Container{DockerContainer: ctr, password: password}
	}
	if err != nil {
		return c, fmt.Errorf("lakesoultc: run %s: %w", img, err)
	}
	return c, nil
}

// WithAdminPassword sets the password of the admin role lakesoul.
func WithAdminPassword(pw string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{envAdminPassword: pw})
}

// WithCatalogURL uses an existing PostgreSQL (a superuser's URL, reachable
// from the container) as the catalog instead of the embedded one; it is
// migrated on start.
func WithCatalogURL(catalogURL string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"LAKESOUL_CATALOG_URL": catalogURL})
}

// WithS3Warehouse keeps the tables' files under warehouse (s3://bucket/
// prefix) on the S3-compatible server at endpoint (path-style; "" for AWS
// itself) with the given keys.
func WithS3Warehouse(warehouse, endpoint, accessKey, secretKey string) testcontainers.CustomizeRequestOption {
	env := map[string]string{"LAKESOUL_WAREHOUSE": warehouse, "AWS_ACCESS_KEY_ID": accessKey,
		"AWS_SECRET_ACCESS_KEY": secretKey, "AWS_REGION": "us-east-1"}
	if endpoint != "" {
		env["AWS_ENDPOINT_URL"] = endpoint
	}
	return testcontainers.WithEnv(env)
}

// FromDockerfile builds the image from a checkout of the repository
// (contextDir holds its Dockerfile) instead of pulling the image Run
// names; the image is kept for the next Run.
func FromDockerfile(contextDir string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithDockerfile(testcontainers.FromDockerfile{Context: contextDir, Dockerfile: "Dockerfile", KeepImage: true})
}

// ConnectionString is a postgres:// URL for the admin role to the server's
// database; args are extra query parameters ("application_name=x").
func (c *Container) ConnectionString(ctx context.Context, args ...string) (string, error) {
	hostPort, err := c.PortEndpoint(ctx, PGPort, "")
	if err != nil {
		return "", fmt.Errorf("lakesoultc: %w", err)
	}
	q := url.Values{"sslmode": {"disable"}}
	for _, a := range args {
		v, err := url.ParseQuery(a)
		if err != nil {
			return "", fmt.Errorf("lakesoultc: connection parameter %q: %w", a, err)
		}
		for k, vs := range v {
			q[k] = vs
		}
	}
	u := url.URL{Scheme: "postgres", User: url.UserPassword(Admin, c.password), Host: hostPort, Path: "/" + Database, RawQuery: q.Encode()}
	return u.String(), nil
}

// AdminPassword is the admin role's password.
func (c *Container) AdminPassword() string { return c.password }

// MetricsURL is the base URL of the server's metrics listener
// (/metrics, /healthz, /readyz).
func (c *Container) MetricsURL(ctx context.Context) (string, error) {
	ep, err := c.PortEndpoint(ctx, MetricsPort, "http")
	if err != nil {
		return "", fmt.Errorf("lakesoultc: %w", err)
	}
	return ep, nil
}

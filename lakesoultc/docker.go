package lakesoultc

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// EnvRequireDocker, when "1", turns RequireDocker's skip into a failure
// (for CI machines that have a Docker engine).
const EnvRequireDocker = "LAKESOUL_REQUIRE_DOCKER"

// RequireDocker skips the test, saying why, when no Docker engine answers
// (testcontainers' provider health check); with LAKESOUL_REQUIRE_DOCKER=1
// it fails it instead.
func RequireDocker(t testing.TB) {
	t.Helper()
	err := dockerHealthWithin(dockerHealthTimeout)
	if err == nil {
		return
	}
	if os.Getenv(EnvRequireDocker) == "1" {
		t.Fatalf("a Docker engine is required (%s=1): %v", EnvRequireDocker, err)
	}
	t.Skipf("no Docker engine answers, so no container runs here (%s=1 makes this a failure): %v", EnvRequireDocker, err)
}

// dockerHealthTimeout bounds the check: a DOCKER_HOST naming a socket no
// engine serves can make the provider wait for ever, and a test that
// cannot reach Docker should skip, not hang until the test timeout.
const dockerHealthTimeout = 20 * time.Second

// dockerHealthWithin is dockerHealth, or an error once d has passed.
func dockerHealthWithin(d time.Duration) error {
	done := make(chan error, 1)
	safego.Go(func() { done <- dockerHealth() })
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return fmt.Errorf("the Docker engine did not answer within %v", d)
	}
}

func dockerHealth() (err error) {
	defer func() {
		if r := recover(); r != nil { // the provider panics on some broken setups
			err = &panicError{r}
		}
	}()
	p, err := testcontainers.ProviderDocker.GetProvider()
	if err != nil {
		return err
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), dockerHealthTimeout)
	defer cancel()
	return p.Health(ctx)
}

type panicError struct{ v any }

func (e *panicError) Error() string { return fmt.Sprintf("docker provider: %v", e.v) }

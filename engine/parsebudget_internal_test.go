package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// TestParseBudget: text beyond the whole budget is refused with 54000; text
// within it waits while others hold the budget, and the wait ends with its
// context.
func TestParseBudget(t *testing.T) {
	b := newParseBudget(1 << 30) // 4 MiB share, raised to the 16 MiB floor
	if b.size != minParseBudget {
		t.Fatalf("budget %d, want %d", b.size, minParseBudget)
	}
	if _, err := b.acquire(context.Background(), minParseBudget+1); sqlerr.Code(err) != sqlerr.ProgramLimitExceeded {
		t.Fatalf("text over the budget: %v, want 54000", err)
	}
	release, err := b.acquire(context.Background(), 10<<20)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.acquire(ctx, 10<<20); !errors.Is(err, context.Canceled) {
		t.Fatalf("waiting with a cancelled context: %v", err)
	}
	release()
	release, err = b.acquire(context.Background(), 10<<20)
	if err != nil {
		t.Fatalf("after the release: %v", err)
	}
	release()
	if got := newParseBudget(0).size; got != unlimitedParseBudget {
		t.Errorf("budget without a memory limit: %d", got)
	}
}

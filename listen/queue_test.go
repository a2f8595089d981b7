package listen

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// testHub is a hub whose catalog is never reached (user channels only).
func testHub(t *testing.T, lim Limits) *Hub {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@127.0.0.1:1/none")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	h := New(pool, nil, lim)
	t.Cleanup(h.Close)
	return h
}

func wantQueueFull(t *testing.T, what string, err error) {
	t.Helper()
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Code != sqlerr.ProgramLimitExceeded || e.Message != "too many notifications in the NOTIFY queue" {
		t.Fatalf("%s: %v, want 54000 too many notifications in the NOTIFY queue", what, err)
	}
}

// TestQueueBounds: a listener that never takes its notifications fills its
// own queue, after which NOTIFYs on its channel fail whole (nothing of a
// refused batch is queued anywhere) while other channels go on; the
// server's bound holds across listeners; a prepared block's charge is
// given back by Cancel and by the listener's Close; Take gives the room
// back.
func TestQueueBounds(t *testing.T) {
	payload := strings.Repeat("x", 1000)
	cost := Notification{Channel: "slow", Payload: payload}.cost()
	h := testHub(t, Limits{Queue: 10 * cost, PerListener: 4 * cost})
	wakes := 0
	slow := h.NewListener("a", 1, func() { wakes++ })
	slow.Listen("slow")
	other := h.NewListener("b", 2, func() {})
	other.Listen("othr")
	other.Listen("sloX")

	for i := range 4 {
		if err := h.Notify(9, Note{"slow", payload}); err != nil {
			t.Fatalf("NOTIFY %d: %v", i, err)
		}
	}
	wantQueueFull(t, "NOTIFY beyond the listener's bound", h.Notify(9, Note{"slow", payload}))
	// A batch is all or nothing: its first note fits another listener.
	wantQueueFull(t, "batch", h.Notify(9, Note{"othr", payload}, Note{"slow", payload}))
	if got := other.Take(1 << 20); len(got) != 0 {
		t.Fatalf("a refused batch queued %d notifications", len(got))
	}
	if wakes != 4 {
		t.Fatalf("wakes: %d, want 4", wakes)
	}
	// Other channels still work, up to the server's bound (4 of 10 used).
	for i := range 4 {
		if err := h.Notify(9, Note{"sloX", payload}); err != nil {
			t.Fatalf("NOTIFY sloX %d: %v", i, err)
		}
	}
	// other holds 4 of its 4: its own bound; a third listener on another
	// channel meets the server's bound after 2 more.
	third := h.NewListener("c", 3, func() {})
	third.Listen("thrd")
	for range 2 {
		if err := h.Notify(9, Note{"thrd", payload}); err != nil {
			t.Fatal(err)
		}
	}
	wantQueueFull(t, "NOTIFY beyond the server's bound", h.Notify(9, Note{"thrd", payload}))
	if got, want := h.Queued(), 10*cost; got != want {
		t.Fatalf("queued %d, want %d", got, want)
	}

	// Take gives room back: about maxBytes at a time, at least one.
	if got := slow.Take(1); len(got) != 1 || got[0].Payload != payload || got[0].PID != 9 {
		t.Fatalf("Take(1): %v", got)
	}
	p, err := h.Prepare(9, []Note{{"slow", payload}}, nil, nil)
	if err != nil {
		t.Fatalf("Prepare after Take: %v", err)
	}
	wantQueueFull(t, "NOTIFY while a block holds the room", h.Notify(9, Note{"slow", payload}))
	p.Cancel()
	p.Send() // after Cancel: nothing
	if err := h.Notify(9, Note{"slow", payload}); err != nil {
		t.Fatalf("NOTIFY after Cancel: %v", err)
	}
	if got := slow.Take(1 << 20); len(got) != 4 {
		t.Fatalf("Take all: %d notifications, want 4", len(got))
	}

	// A listener's Close gives back what it held and what a block
	// prepared for it.
	p, err = h.Prepare(9, []Note{{"sloX", payload}, {"slow", payload}}, nil, nil)
	if err == nil {
		t.Fatal("Prepare on a full listener's channel succeeded")
	}
	other.Close()
	p, err = h.Prepare(9, []Note{{"thrd", payload}, {"slow", payload}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	slow.Close()
	p.Send()
	third.Close()
	if got := h.Queued(); got != 0 {
		t.Fatalf("queued %d after every listener closed, want 0", got)
	}
}

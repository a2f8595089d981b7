package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestNotifyQueueBounded: a session that LISTENs and never reads lets
// another session NOTIFY only until the listener's queue is full (with
// --memory-limit 256MiB: 16 MiB for all queues, 2 MiB for one); then NOTIFY
// on its channel fails with PostgreSQL's 54000 "too many notifications in
// the NOTIFY queue", and so does the COMMIT of a block that notified it,
// which rolls back; the server's peak RSS does not grow with what was
// sent; other channels go on meanwhile; once the listener disconnects its
// channel works again; a block's own LISTEN counts for its NOTIFYs. (Without the bound the server queued 64 Ki
// notifications per listener and never refused one.)
func TestNotifyQueueBounded(t *testing.T) {
	s := limitsServer(t, "--memory-limit", "256MiB")
	ctx := testCtx(t)
	slow := s.connect(t)
	notifier := s.connect(t)
	mustExec(t, ctx, slow, "LISTEN nq_slow")
	wantAlive(t, ctx, notifier, "start")
	before := peakRSS(t, s.cmd.Process.Pid)

	// Ten NOTIFYs of 7 900 bytes a query, until refused: 2 MiB of queue
	// plus what the sockets buffer is far below the 20 000 tried.
	payload := strings.Repeat("n", 7900)
	var batch strings.Builder
	for range 10 {
		fmt.Fprintf(&batch, "NOTIFY nq_slow, '%s';", payload)
	}
	sent := 0
	var refused error
	for sent < 20000 {
		if _, err := notifier.Exec(ctx, batch.String()); err != nil {
			refused = err
			break
		}
		sent += 10
	}
	// A string of several statements is one transaction: after its
	// refusal single NOTIFYs may still fit, until the queue is full.
	for i := 0; refused != nil && i < 20; i++ {
		if _, err := notifier.Exec(ctx, "NOTIFY nq_slow, '"+payload+"'"); err != nil {
			refused = err
			break
		}
		sent++
	}
	var pe *pgconn.PgError
	if !errors.As(refused, &pe) || pe.Code != "54000" || pe.Message != "too many notifications in the NOTIFY queue" {
		t.Fatalf("after %d NOTIFYs to a listener that does not read: %v, want 54000 too many notifications in the NOTIFY queue", sent, refused)
	}
	t.Logf("refused after %d NOTIFYs (%d MiB)", sent, sent*len(payload)>>20)
	after := peakRSS(t, s.cmd.Process.Pid)
	t.Logf("server peak RSS %d MiB before, %d MiB after", before>>20, after>>20)
	if grown := after - before; grown > 96<<20 {
		t.Errorf("server peak RSS grew by %d MiB for %d MiB of NOTIFY payloads", grown>>20, sent*len(payload)>>20)
	}

	// The COMMIT of a block that notifies the full channel fails and
	// rolls back; the session goes on outside a block.
	mustExec(t, ctx, notifier, "BEGIN", "NOTIFY nq_slow, '"+payload+"'")
	if _, err := notifier.Exec(ctx, "COMMIT"); !errors.As(err, &pe) || pe.Code != "54000" {
		t.Fatalf("COMMIT of a block notifying the full channel: %v, want 54000", err)
	}
	if st := notifier.PgConn().TxStatus(); st != 'I' {
		t.Fatalf("after the failed COMMIT the session is in state %c, want I", st)
	}

	// Other channels go on while the listener holds its queue full.
	other := s.connect(t)
	mustExec(t, ctx, other, "LISTEN nq_other")
	mustExec(t, ctx, notifier, "NOTIFY nq_other, 'meanwhile'")
	wantNotification(t, ctx, other, "nq_other", "meanwhile")

	// The listener leaves: its queue is given back, its channel works.
	slow.Close(ctx)
	next := s.connect(t)
	// DISCARD ALL is UNLISTEN *: the session listens again afterwards.
	mustExec(t, ctx, next, "LISTEN nq_slow", "DISCARD ALL", "LISTEN nq_slow")
	poll(t, "NOTIFY nq_slow after the slow listener left", func() bool {
		_, err := notifier.Exec(ctx, "NOTIFY nq_slow, 'after'")
		return err == nil
	})
	wantNotification(t, ctx, next, "nq_slow", "after")
	wantAlive(t, ctx, notifier, "the full queue")

	// A block's own LISTEN counts for its NOTIFYs: it takes effect first at
	// COMMIT, as in PostgreSQL (explicit and implicit blocks).
	mustExec(t, ctx, other, "BEGIN", "LISTEN nq_self", "NOTIFY nq_self, 'me'", "COMMIT")
	wantNotification(t, ctx, other, "nq_self", "me")
	mustExec(t, ctx, other, "UNLISTEN nq_self; LISTEN nq_self2; NOTIFY nq_self, 'not me'; NOTIFY nq_self2, 'me too'")
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if n, err := other.WaitForNotification(wctx); err != nil || n.Channel != "nq_self2" || n.Payload != "me too" {
		t.Fatalf("after UNLISTEN nq_self; LISTEN nq_self2 in one string: %+v, %v; want only nq_self2/me too", n, err)
	}
}

// wantNotification waits for the notification channel/payload on c.
func wantNotification(t *testing.T, ctx context.Context, c interface {
	WaitForNotification(context.Context) (*pgconn.Notification, error)
}, channel, payload string) {
	t.Helper()
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		n, err := c.WaitForNotification(wctx)
		if err != nil {
			t.Fatalf("waiting for %s/%s: %v", channel, payload, err)
		}
		if n.Channel == channel && n.Payload == payload {
			return
		}
	}
}

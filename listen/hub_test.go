package listen

import (
	"context"
	"net"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// TestListenCommitsWithoutCatalog: a hub whose catalog cannot be reached
// signals the failure to LISTEN lakesoul_commits instead of a readiness it
// does not have, and a closed hub signals at once; the session's channels
// are what it listens on.
func TestListenCommitsWithoutCatalog(t *testing.T) {
	// A port nothing listens on: a listener bound and closed again.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	pool, err := pgxpool.New(context.Background(), "postgres://nobody@"+addr+"/none?connect_timeout=5")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	h := New(pool, nil, Limits{})
	l := h.NewListener("someone", 1, func() {})
	if ready, failed := l.Listen("plain"); ready != nil || failed != nil {
		t.Fatalf("a user channel has readiness: %v %v", ready, failed)
	}
	ready, failed := l.Listen(CommitsChannel)
	select {
	case <-failed:
	case <-ready:
		t.Fatal("ready without a catalog")
	}
	if h.Failure() == nil {
		t.Fatal("failed is closed but Failure is nil")
	}
	if got := l.Channels(); !slices.Equal(sortedCopy(got), []string{CommitsChannel, "plain"}) {
		t.Fatalf("Channels: %v", got)
	}
	l.Unlisten("plain")
	if got := l.Channels(); !slices.Equal(got, []string{CommitsChannel}) {
		t.Fatalf("Channels after UNLISTEN plain: %v", got)
	}
	h.Close()
	l2 := h.NewListener("someone", 2, func() {})
	_, failed = l2.Listen(CommitsChannel)
	select {
	case <-failed:
	default:
		t.Fatal("a closed hub does not signal failure")
	}
	if h.Failure() == nil {
		t.Fatal("a closed hub has no Failure")
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

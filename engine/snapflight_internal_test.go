package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/pgwire"
)

// internalQuery runs q on s and returns its rows.
func internalQuery(ctx context.Context, s *Session, q string) (rowsOf, error) {
	stmts, err := s.Parse(ctx, q, nil)
	if err != nil {
		return nil, err
	}
	var rows rowsOf
	for _, st := range stmts {
		p, err := st.Bind(ctx, nil)
		if err != nil {
			return nil, err
		}
		_, _, err = p.Execute(ctx, 0, &rows)
		p.Close()
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

func otherSession(t *testing.T, s *Session) *Session {
	t.Helper()
	ps, err := s.e.NewSession(context.Background(), map[string]string{"user": s.e.catalogRole, "database": DatabaseName}, pgwire.Credential{})
	if err != nil {
		t.Fatal(err)
	}
	o := ps.(*Session)
	t.Cleanup(o.Close)
	return o
}

// TestSnapshotQueriesCoalesce: statements of many sessions that read the
// same table at once share the catalog's snapshot query — with the
// catalog's partition table locked, six point selects wait in one catalog
// backend, not six — and each gets the table's rows when the lock goes.
func TestSnapshotQueriesCoalesce(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE flight_kv (id int PRIMARY KEY, v int) WITH (hash_bucket_num = 2)")
	exec("INSERT INTO flight_kv SELECT g, g * 10 FROM generate_series(1, 6) g")
	sessions := []*Session{s}
	for range 5 {
		sessions = append(sessions, otherSession(t, s))
	}
	lock, err := s.e.cat.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback(ctx)
	if _, err := lock.Exec(ctx, "LOCK TABLE public.partition_info IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	var joined atomic.Int32
	testHookSnapshotJoined = func(string) { joined.Add(1) }
	defer func() { testHookSnapshotJoined = nil }()
	var wg sync.WaitGroup
	errs := make([]error, len(sessions))
	got := make([]rowsOf, len(sessions))
	for i, ss := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = internalQuery(ctx, ss, fmt.Sprintf("SELECT v FROM flight_kv WHERE id = %d", i+1))
		}()
	}
	// Wait until every statement is accounted for: waiting for the lock in
	// a catalog backend with a snapshot query, or joined to the flight after
	// one (not until a count has held for a while: on a busy machine the
	// later statements may not have started by then).
	waiting := 0
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if err := s.e.cat.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%live_files_cached%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting+int(joined.Load()) >= len(sessions) || time.Now().After(deadline) {
			break
		}
	}
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if n := waiting + int(joined.Load()); n < len(sessions) {
		t.Errorf("%d of %d statements reached the snapshot query or its flight", n, len(sessions))
	}
	if waiting != 1 {
		t.Errorf("%d catalog backends ran snapshot queries for 6 concurrent statements on one table, want 1", waiting)
	}
	for i := range sessions {
		if errs[i] != nil {
			t.Errorf("statement %d: %v", i, errs[i])
		} else if len(got[i]) != 1 || fmt.Sprint(got[i][0][0]) != fmt.Sprint((i+1)*10) {
			t.Errorf("statement %d: %v, want %d", i, got[i], (i+1)*10)
		}
	}
}

// TestSnapshotQueryNotJoinedLate: a statement never takes the answer of a
// snapshot query sent before it started. While a shared query that has its
// answer is held back from its statements, another session commits an
// update (a REPEATABLE READ block, whose reads do not share) and then a
// new statement reads the row: it must see the update, so it waits for a
// query of its own.
func TestSnapshotQueryNotJoinedLate(t *testing.T) {
	ctx := context.Background()
	s, exec := newInternalSession(t)
	exec("CREATE TABLE flight_late (id int PRIMARY KEY, v int)")
	exec("INSERT INTO flight_late VALUES (1, 0)")
	writer, late := otherSession(t, s), otherSession(t, s)
	answered, release, joined := make(chan struct{}), make(chan struct{}), make(chan struct{}, 8)
	var once sync.Once
	testHookSnapshotFlight = func(string) {
		once.Do(func() {
			close(answered)
			<-release
		})
	}
	testHookSnapshotJoined = func(string) { joined <- struct{}{} }
	defer func() { testHookSnapshotFlight, testHookSnapshotJoined = nil, nil }()

	first := make(chan error, 1)
	go func() {
		rows, err := internalQuery(ctx, s, "SELECT v FROM flight_late WHERE id = 1")
		if err == nil && (len(rows) != 1 || fmt.Sprint(rows[0][0]) != "0") {
			err = fmt.Errorf("first read: %v, want 0 (it started before the update)", rows)
		}
		first <- err
	}()
	select {
	case <-answered:
	case <-time.After(20 * time.Second):
		t.Fatal("the first statement's snapshot query did not run")
	}
	if _, err := internalQuery(ctx, writer, "BEGIN ISOLATION LEVEL REPEATABLE READ; UPDATE flight_late SET v = 1 WHERE id = 1; COMMIT"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		rows, err := internalQuery(ctx, late, "SELECT v FROM flight_late WHERE id = 1")
		if err == nil && (len(rows) != 1 || fmt.Sprint(rows[0][0]) != "1") {
			err = fmt.Errorf("read after the update committed: %v, want 1", rows)
		}
		second <- err
	}()
	// The late statement has joined a flight (or, wrongly, finished with
	// the held answer) before the first query's answer is released.
	select {
	case <-joined:
	case err := <-second:
		second <- err
	case <-time.After(20 * time.Second):
		t.Fatal("the late statement neither joined a flight nor finished")
	}
	close(release)
	if err := <-first; err != nil {
		t.Error(err)
	}
	if err := <-second; err != nil {
		t.Error(err)
	}
}

// TestSnapshotFlightCancelledWhenLeft: a shared snapshot query is
// cancelled once every statement waiting on it has been (as each
// statement's own query was), not while one still waits; a query queued
// behind it whose statements all left is never sent.
func TestSnapshotFlightCancelledWhenLeft(t *testing.T) {
	var fs snapFlights
	var sent atomic.Int32
	started, release := make(chan context.Context, 4), make(chan struct{})
	list := func(ctx context.Context) ([]catalog.PartitionFiles, error) {
		sent.Add(1)
		started <- ctx
		select {
		case <-release:
			return nil, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	joined := make(chan struct{}, 4)
	testHookSnapshotJoined = func(string) { joined <- struct{}{} }
	defer func() { testHookSnapshotJoined = nil }()
	wait := func(ctx context.Context, queued bool) chan error {
		errc := make(chan error, 1)
		go func() {
			_, err := fs.do(ctx, "k", list)
			errc <- err
		}()
		if queued {
			<-joined
		}
		return errc
	}

	// a's query runs; b and c wait for the next one.
	a := wait(context.Background(), false)
	<-started
	ctxB, cancelB := context.WithCancel(context.Background())
	ctxC, cancelC := context.WithCancel(context.Background())
	b, c := wait(ctxB, true), wait(ctxC, true)
	release <- struct{}{}
	if err := <-a; err != nil {
		t.Fatal(err)
	}
	query := <-started // b's and c's
	// d waits for the query after b's and c's.
	ctxD, cancelD := context.WithCancel(context.Background())
	d := wait(ctxD, true)

	cancelB()
	if err := <-b; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled statement: %v", err)
	}
	if query.Err() != nil {
		t.Fatal("the shared query was cancelled while a statement still waits on it")
	}
	cancelD()
	if err := <-d; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled statement: %v", err)
	}
	cancelC()
	if err := <-c; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled statement: %v", err)
	}
	select {
	case <-query.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the shared query still runs after every statement waiting on it was cancelled")
	}
	// The key is forgotten once the query ends; d's query was never sent.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		fs.mu.Lock()
		n := len(fs.m)
		fs.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the key's state outlived its flights")
		}
	}
	if n := sent.Load(); n != 2 {
		t.Errorf("%d queries sent, want 2 (d left before its query was sent)", n)
	}
}

package catalog_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// Write intents: a commit under an intent consumes it; a commit whose
// intent expired (or was collected) fails and lands nothing; every file a
// commit adds under an intent carries its id or was claimed; re-sending a
// commit that landed is still answered.

func intentRows(t *testing.T, c *catalog.Catalog, id string) int {
	t.Helper()
	var n int
	if err := c.Pool().QueryRow(context.Background(), "SELECT count(*) FROM lakesoul.write_intent WHERE id = $1", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != code {
		t.Fatalf("%s: %v, want SQLSTATE %s", what, err, code)
	}
}

func TestWriteIntentCommit(t *testing.T) {
	owner, _ := openCatalog(t)
	ctx := context.Background()
	for _, h := range handles(t, owner, "wi") {
		t.Run(h.name, func(t *testing.T) {
			c := h.c
			tbl := newTable(t, c, h.ns, "t", []string{"d"}, []string{"id"})
			other := newTable(t, c, h.ns, "u", nil, nil)
			under := func(w *catalog.WriteIntent, dir string) []catalog.FileOp {
				return add(tbl.Path + "/" + dir + "/" + w.FileName(0))
			}

			// A commit consumes its intent; sending it again (a client that
			// lost the answer) gets the same versions.
			w, err := c.BeginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			parts := []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: under(w, "d=1")}}
			v, err := c.Commit(ctx, w, tbl.ID, catalog.MergeCommit, parts)
			if err != nil || v["d=1"] != 0 {
				t.Fatalf("commit under an intent: %v %v", v, err)
			}
			if intentRows(t, owner, w.ID()) != 0 {
				t.Fatal("the commit did not consume its intent")
			}
			if v, err := c.Commit(ctx, w, tbl.ID, catalog.MergeCommit, parts); err != nil || v["d=1"] != 0 {
				t.Fatalf("re-sent commit: %v %v", v, err)
			}
			before := catalogCounts(t, owner, tbl.ID)

			// A file the intent does not name is refused, and the intent
			// stays for a correct commit.
			w2, err := c.BeginWrite(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w2.Release(ctx)
			_, err = c.Commit(ctx, w2, tbl.ID, catalog.MergeCommit,
				[]catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: add(tbl.Path + "/d=1/part-NotMineAtAll1234_0000.parquet")}})
			wantCode(t, "a file outside the intent", err, "22023")
			if catalogCounts(t, owner, tbl.ID) != before || intentRows(t, owner, w2.ID()) != 1 {
				t.Fatal("a refused commit changed the catalog or consumed the intent")
			}
			// A claimed path may be added; several tables commit under one
			// intent (a transaction block).
			moved := tbl.Path + "/compactdir2/d=1/part-SomeoneElses1234_0000.parquet"
			if err := w2.Claim(ctx, moved); err != nil {
				t.Fatal(err)
			}
			err = c.CommitMany(ctx, w2, []catalog.TableCommit{
				{TableID: tbl.ID, Op: catalog.MergeCommit, Parts: []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(),
					Ops: append(under(w2, "d=1"), add(moved)...)}}},
				{TableID: other.ID, Op: catalog.AppendCommit, Parts: []catalog.PartitionCommit{{Desc: "-5", CommitID: uuid.New(),
					Ops: add(other.Path + "/" + w2.FileName(0))}}}})
			if err != nil {
				t.Fatalf("commit_many under an intent: %v", err)
			}
			if intentRows(t, owner, w2.ID()) != 0 {
				t.Fatal("commit_many did not consume its intent")
			}
			before = catalogCounts(t, owner, tbl.ID)

			// An expired intent fails the commit (55000), before and after
			// a collector removed it; nothing lands.
			for _, collected := range []bool{false, true} {
				w3, err := c.BeginWrite(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := owner.Pool().Exec(ctx, "UPDATE lakesoul.write_intent SET expires_at = now() - interval '1 second' WHERE id = $1", w3.ID()); err != nil {
					t.Fatal(err)
				}
				if collected {
					if _, err := owner.Pool().Exec(ctx, "SELECT lakesoul.write_intents_expire()"); err != nil {
						t.Fatal(err)
					}
				}
				_, err = c.Commit(ctx, w3, tbl.ID, catalog.MergeCommit, []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: under(w3, "d=1")}})
				wantCode(t, fmt.Sprintf("commit under an expired intent (collected %v)", collected), err, "55000")
				err = c.CommitMany(ctx, w3, []catalog.TableCommit{{TableID: tbl.ID, Op: catalog.MergeCommit,
					Parts: []catalog.PartitionCommit{{Desc: "d=1", CommitID: uuid.New(), Ops: under(w3, "d=1")}}}})
				wantCode(t, "commit_many under an expired intent", err, "55000")
				if catalogCounts(t, owner, tbl.ID) != before {
					t.Fatal("a commit under an expired intent landed")
				}
				w3.Release(ctx)
			}
		})
	}
}

// The intents table is the server's: a user can neither read it nor
// expire, renew or consume intents without their token.
func TestWriteIntentsAreTheOwners(t *testing.T) {
	owner, _ := openCatalog(t)
	ctx := context.Background()
	user := handles(t, owner, "wo")[1].c
	w, err := owner.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release(ctx)
	for _, q := range []string{
		"SELECT count(*) FROM lakesoul.write_intent",
		"SELECT lakesoul.write_intents_expire()",
		"SELECT count(*) FROM lakesoul.write_intents_live()",
		"SELECT lakesoul.write_intent_renew('" + w.ID() + "', gen_random_uuid(), 1000)",
		"SELECT lakesoul.write_intent_release('" + w.ID() + "', gen_random_uuid())",
		"SELECT * FROM lakesoul.write_intent_begin(1000)",
	} {
		err := user.Tx(ctx, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, q)
			return err
		})
		wantCode(t, q, err, "42501")
	}
	var claimed []string
	err = user.Tx(ctx, func(tx pgx.Tx) error {
		return tx.QueryRow(ctx, "SELECT lakesoul.write_intent_consume($1, gen_random_uuid())", w.ID()).Scan(&claimed)
	})
	if err != nil || claimed != nil || intentRows(t, owner, w.ID()) != 1 {
		t.Fatalf("consume without the token: %v %v", claimed, err)
	}
}

// The renewals stop once the intent expired: the writer learns it lost it.
func TestWriteIntentRenewalNoticesExpiry(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	ttl := catalog.IntentTTL
	catalog.IntentTTL = 300 * time.Millisecond
	defer func() { catalog.IntentTTL = ttl }()
	w, err := c.BeginWrite(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Release(ctx)
	var exp1, exp2 time.Time
	if err := c.Pool().QueryRow(ctx, "SELECT expires_at FROM lakesoul.write_intent WHERE id = $1", w.ID()).Scan(&exp1); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if err := c.Pool().QueryRow(ctx, "SELECT expires_at FROM lakesoul.write_intent WHERE id = $1", w.ID()).Scan(&exp2); err != nil {
			t.Fatal(err)
		}
		if exp2.After(exp1) {
			break // renewed
		}
		if time.Now().After(deadline) {
			t.Fatal("the intent was never renewed")
		}
	}
	if _, err := c.Pool().Exec(ctx, "UPDATE lakesoul.write_intent SET expires_at = now() - interval '1 second' WHERE id = $1", w.ID()); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); !w.Lost(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the writer did not notice that its intent expired")
		}
	}
	var live bool
	if err := c.Pool().QueryRow(ctx, "SELECT expires_at > now() FROM lakesoul.write_intent WHERE id = $1", w.ID()).Scan(&live); err != nil || live {
		t.Fatalf("an expired intent was renewed: %v %v", live, err)
	}
}

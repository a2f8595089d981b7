package catalog_test

import (
	"context"
	"sync"
	"testing"

	"github.com/lakesoul-go/lakesoul/catalog"
)

// TestAddSubscriptionTableConcurrently: REFRESH PUBLICATION and a worker
// meeting the same new table in its stream add it at the same time; exactly
// one adds it, the others find it known, none fails (a unique violation
// once failed REFRESH). Another subscription racing for the same lake table
// gets 42710, not 23505.
func TestAddSubscriptionTableConcurrently(t *testing.T) {
	c, _ := openCatalog(t)
	ctx := context.Background()
	for _, name := range []string{"race1", "race2"} {
		if err := c.CreateSubscription(ctx, &catalog.Subscription{Name: name, Kind: "postgres", Connection: "host=x",
			Source: "host=x", Publications: []string{"p"}, TargetSchema: name, HashBucketNum: 1, CopyData: true}); err != nil {
			t.Fatal(err)
		}
	}
	// Calls 0–6 are race1's, call 7 is race2's: the same lake table.
	subOf := func(i int) string {
		if i == 7 {
			return "race2"
		}
		return "race1"
	}
	for round := range 20 {
		table := catalog.SubscriptionTable{SourceTable: "public.t" + string(rune('a'+round)), Namespace: "shared",
			TableName: "t" + string(rune('a'+round))}
		var wg sync.WaitGroup
		added := make([]bool, 8)
		errs := make([]error, 8)
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				added[i], errs[i] = c.AddSubscriptionTable(ctx, subOf(i), table)
			}()
		}
		wg.Wait()
		owner, n := "", 0
		for i := range 8 {
			if added[i] {
				owner, n = subOf(i), n+1
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d calls added the table, want 1 (errors %v)", round, n, errs)
		}
		for i := range 8 {
			if subOf(i) == owner {
				if errs[i] != nil {
					t.Fatalf("round %d: %s adding its known table: %v", round, owner, errs[i])
				}
				continue
			}
			wantCode(t, "the other subscription", errs[i], "42710")
		}
	}
}

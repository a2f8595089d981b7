package catalog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// CDC subscriptions (migration 000012, sqlfuncs/100_cdc.sql). Every call
// runs as the catalog owner, the only role that may read the connection
// strings; package cdc decides who may ask for what.

// Subscription is a subscription row, with its secret connection string.
type Subscription struct {
	Name             string
	Kind             string // "postgres" or "mysql"
	Connection       string
	Source           string // Connection without the password
	Publications     []string
	TargetSchema     string
	HashBucketNum    int
	CopyData         bool
	Enabled          bool
	CommitInterval   time.Duration
	SlotName         string
	State            string
	Position         string // "" until the initial copy committed
	SourcePosition   string
	Generation       int
	CreatedAt        time.Time
	SubscriptionRows []SubscriptionTable
}

// SubscriptionTable is one source table of a subscription and its lake table.
type SubscriptionTable struct {
	SourceTable string
	Namespace   string
	TableName   string
	TableID     string
	State       string // ready or error
	Columns     json.RawMessage
	SyncedAt    string
	LastError   string
}

// CreateSubscription registers sub and the lake tables its source tables
// map to (sub.SubscriptionRows: SourceTable, TableName). 42710 if the name
// or a target table is taken.
func (c *Catalog) CreateSubscription(ctx context.Context, sub *Subscription) error {
	src := make([]string, len(sub.SubscriptionRows))
	names := make([]string, len(sub.SubscriptionRows))
	for i, t := range sub.SubscriptionRows {
		src[i], names[i] = t.SourceTable, t.TableName
	}
	owner := c.As("")
	err := owner.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, `SELECT lakesoul.cdc_create($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			sub.Name, sub.Kind, sub.Connection, sub.Source, sub.Publications, sub.TargetSchema, sub.HashBucketNum,
			sub.CopyData, sub.Enabled, sub.CommitInterval.Milliseconds(), nullString(sub.SlotName), src, names)
		return err
	})
	if err == nil {
		c.wakeSubscriptions(ctx, sub.Name)
	}
	return err
}

// SubscriptionsChannel is the channel on which subscription changes are
// notified (package cdc's workers LISTEN).
const SubscriptionsChannel = "lakesoul_subscriptions"

// wakeSubscriptions notifies the workers after a change of subscription
// name (best effort: they also poll).
func (c *Catalog) wakeSubscriptions(ctx context.Context, name string) {
	_ = c.As("").run(context.WithoutCancel(ctx), func(q querier) error {
		_, err := q.Exec(ctx, "SELECT pg_notify($1, $2)", SubscriptionsChannel, name)
		return err
	})
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// SubscriptionByName reads a subscription and its tables; 42704 if there is
// none.
func (c *Catalog) SubscriptionByName(ctx context.Context, name string) (*Subscription, error) {
	owner := c.As("")
	var sub Subscription
	err := owner.Tx(ctx, func(tx pgx.Tx) error {
		var slot, pos, srcPos *string
		var intervalMS int64
		err := tx.QueryRow(ctx, `SELECT name, kind, connection, source, publications, target_schema, hash_bucket_num,
			copy_data, enabled, commit_interval_ms, slot_name, state, position, source_position, generation, created_at
			FROM lakesoul.subscription WHERE name = $1`, name).Scan(&sub.Name, &sub.Kind, &sub.Connection, &sub.Source,
			&sub.Publications, &sub.TargetSchema, &sub.HashBucketNum, &sub.CopyData, &sub.Enabled, &intervalMS, &slot,
			&sub.State, &pos, &srcPos, &sub.Generation, &sub.CreatedAt)
		if err != nil {
			return err
		}
		sub.CommitInterval = time.Duration(intervalMS) * time.Millisecond
		sub.SlotName, sub.Position, sub.SourcePosition = deref(slot), deref(pos), deref(srcPos)
		rows, err := tx.Query(ctx, `SELECT source_table, namespace, table_name, coalesce(table_id, ''), state,
			coalesce(columns, 'null'::jsonb), coalesce(synced_at, ''), coalesce(last_error, '')
			FROM lakesoul.subscription_table WHERE subscription = $1 ORDER BY source_table`, name)
		if err != nil {
			return err
		}
		sub.SubscriptionRows, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (SubscriptionTable, error) {
			var t SubscriptionTable
			var cols []byte
			err := r.Scan(&t.SourceTable, &t.Namespace, &t.TableName, &t.TableID, &t.State, &cols, &t.SyncedAt, &t.LastError)
			t.Columns = cols
			return t, err
		})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, sqlerr.New(sqlerr.UndefinedObject, "subscription %q does not exist", name)
	}
	if err != nil {
		return nil, err
	}
	return &sub, nil
}

// DeleteSubscription removes a subscription's rows (its worker stops at
// its next renewal) and returns what it was; 42704 if there is none.
func (c *Catalog) DeleteSubscription(ctx context.Context, name string) (*Subscription, error) {
	sub, err := c.SubscriptionByName(ctx, name)
	if err != nil {
		return nil, err
	}
	err = c.As("").run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "DELETE FROM lakesoul.subscription WHERE name = $1", name)
		return err
	})
	return sub, err
}

// SetSubscriptionEnabled enables or disables a subscription; a change of
// state bumps its generation (a disabled one's worker stops at its next
// renewal).
func (c *Catalog) SetSubscriptionEnabled(ctx context.Context, name string, enabled bool) error {
	return c.updateSubscription(ctx, name, "enabled = $2, generation = generation + CASE WHEN enabled <> $2 THEN 1 ELSE 0 END", enabled)
}

// BumpSubscription asks the subscription's worker to restart its run
// (REFRESH PUBLICATION).
func (c *Catalog) BumpSubscription(ctx context.Context, name string) error {
	return c.updateSubscription(ctx, name, "generation = generation + 1")
}

func (c *Catalog) updateSubscription(ctx context.Context, name, set string, args ...any) error {
	var n int64
	err := c.As("").run(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, "UPDATE lakesoul.subscription SET "+set+" WHERE name = $1", append([]any{name}, args...)...)
		n = tag.RowsAffected()
		return err
	})
	if err == nil && n == 0 {
		return sqlerr.New(sqlerr.UndefinedObject, "subscription %q does not exist", name)
	}
	if err == nil {
		c.wakeSubscriptions(ctx, name)
	}
	return err
}

// AddSubscriptionTable registers a source table that joined a
// subscription; false if it was known. 42710 if another subscription
// replicates into that lake table.
func (c *Catalog) AddSubscriptionTable(ctx context.Context, name string, t SubscriptionTable) (bool, error) {
	var added bool
	err := c.As("").run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.cdc_add_table($1, $2, $3, $4, $5)",
			name, t.SourceTable, t.Namespace, t.TableName, nullString(t.SyncedAt)).Scan(&added)
	})
	return added, err
}

// ClaimSubscription gives worker one subscription to apply under a lease,
// or "" when none is free.
func (c *Catalog) ClaimSubscription(ctx context.Context, worker string, lease time.Duration) (name string, token uuid.UUID, err error) {
	err = c.As("").run(ctx, func(q querier) error {
		err := q.QueryRow(ctx, "SELECT name, token FROM lakesoul.cdc_claim($1, $2)", worker, lease.Milliseconds()).Scan(&name, &token)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	return name, token, err
}

// RenewSubscription extends the lease and returns the subscription's
// generation; ok is false when the lease is lost (taken over, disabled,
// dropped).
func (c *Catalog) RenewSubscription(ctx context.Context, name string, token uuid.UUID, lease time.Duration) (gen int, ok bool, err error) {
	var g *int
	err = c.As("").run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.cdc_renew($1, $2, $3)", name, token, lease.Milliseconds()).Scan(&g)
	})
	if err != nil || g == nil {
		return 0, false, err
	}
	return *g, true, nil
}

// ReleaseSubscription gives the lease up.
func (c *Catalog) ReleaseSubscription(ctx context.Context, name string, token uuid.UUID) error {
	return c.As("").run(context.WithoutCancel(ctx), func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.cdc_release($1, $2)", name, token)
		return err
	})
}

// SetSubscriptionState records the holder's state, error ("" = none) and
// the newest source position it saw ("" = unchanged); false if the lease
// is lost.
func (c *Catalog) SetSubscriptionState(ctx context.Context, name string, token uuid.UUID, state, lastError, sourcePos string) (bool, error) {
	var ok bool
	err := c.As("").run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.cdc_set_state($1, $2, $3, $4, $5)", name, token, state,
			nullString(lastError), nullString(sourcePos)).Scan(&ok)
	})
	return ok, err
}

// SetSubscriptionTableError stops one table of a subscription.
func (c *Catalog) SetSubscriptionTableError(ctx context.Context, name string, token uuid.UUID, sourceTable, msg string) error {
	return c.As("").run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.cdc_set_table_error($1, $2, $3, $4)", name, token, sourceTable, msg)
		return err
	})
}

// CDCAlter is a schema change of a lake table applied with a CDC batch.
type CDCAlter struct {
	Table *Table
}

// CDCTableState is what a CDC batch records about one source table.
type CDCTableState struct {
	SourceTable string          `json:"source_table"`
	TableID     string          `json:"table_id,omitempty"`
	Columns     json.RawMessage `json:"columns,omitempty"`
	SyncedAt    *string         `json:"synced_at,omitempty"`
}

// CDCBatch is one commit of a subscription: its data, schema changes and
// the source position it reaches from PrevPosition.
type CDCBatch struct {
	Subscription   string
	Token          uuid.UUID
	PrevPosition   string // "" before the initial copy
	Position       string
	Commits        []TableCommit
	Alters         []CDCAlter
	Tables         []CDCTableState
	Intent         *WriteIntent
	SourcePosition string
	SourceCommitAt time.Time
}

// CommitCDC lands b in one catalog transaction (lakesoul.cdc_commit): its
// schema changes, its data (lakesoul.commit_many) and the new position, or
// nothing. already is true when the position was stored before (a commit
// re-sent after a lost connection). Errors mean what CommitMany's do; 55000
// means the lease was lost, 40001 that the position moved: nothing was
// committed.
func (c *Catalog) CommitCDC(ctx context.Context, b *CDCBatch) (already bool, err error) {
	commits, err := commitsJSON(b.Commits)
	if err != nil {
		return false, err
	}
	type jsonAlter struct {
		TableID string            `json:"table_id"`
		Schema  string            `json:"table_schema"`
		Props   map[string]string `json:"properties"`
	}
	alters := make([]jsonAlter, len(b.Alters))
	for i, a := range b.Alters {
		schemaJSON, props, err := tableDefinition(a.Table)
		if err != nil {
			return false, err
		}
		alters[i] = jsonAlter{TableID: a.Table.ID, Schema: schemaJSON, Props: props}
	}
	altersJSON, err := json.Marshal(alters)
	if err != nil {
		return false, err
	}
	tables := b.Tables
	if tables == nil {
		tables = []CDCTableState{}
	}
	tablesJSON, err := json.Marshal(tables)
	if err != nil {
		return false, err
	}
	var commitAt any
	if !b.SourceCommitAt.IsZero() {
		commitAt = b.SourceCommitAt
	}
	intentID, intentToken := intentArgs(b.Intent)
	owner := c.As("")
	var versions []committedVersion
	_, err = owner.retryCommit(ctx, refsOf(b.Commits), func(ctx context.Context) (map[string]int, error) {
		var res string
		err := owner.run(ctx, func(q querier) error {
			return q.QueryRow(ctx, `SELECT lakesoul.cdc_commit($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7::jsonb, $8, $9, $10, $11)`,
				b.Subscription, b.Token, nullString(b.PrevPosition), b.Position, string(commits), string(altersJSON),
				string(tablesJSON), intentID, intentToken, nullString(b.SourcePosition), commitAt).Scan(&res)
		})
		if err != nil {
			return nil, fmt.Errorf("commit of subscription %s at %s: %w", b.Subscription, b.Position, err)
		}
		already = res == "already"
		if already {
			return nil, nil
		}
		if err := json.Unmarshal([]byte(res), &versions); err != nil {
			return nil, fmt.Errorf("commit of subscription %s at %s: versions %q: %w", b.Subscription, b.Position, res, err)
		}
		return nil, nil
	})
	if err != nil {
		return false, err
	}
	b.Intent.Consumed()
	// A batch whose commit was found stored by a retry ("already") is not
	// announced: its versions are not known here (notices are hints).
	c.notifyVersions(versions)
	return already, nil
}

// IsSuperuser reports whether the handle's role is a superuser of the
// catalog.
func (c *Catalog) IsSuperuser(ctx context.Context) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user").Scan(&ok)
	})
	return ok, err
}

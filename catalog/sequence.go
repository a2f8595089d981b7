package catalog

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Sequences of lake namespaces live in the catalog PostgreSQL (migration 14,
// sqlfuncs/110_sequences.sql): every call runs as the handle's role, so
// row-level security decides which sequences it sees and PostgreSQL's grants
// whether it may advance them.

// SequenceOptions are CREATE SEQUENCE's options; nil means PostgreSQL's
// default.
type SequenceOptions struct {
	Start, Increment, Min, Max *int64
	Cycle                      bool
	// OwnerTable is the table_id whose column owns the sequence (SERIAL,
	// IDENTITY); DropTableSequences drops it with the table.
	OwnerTable string
}

// CreateSequence creates sequence name in namespace (42P07 when it exists).
func (c *Catalog) CreateSequence(ctx context.Context, namespace, name string, o SequenceOptions) error {
	var owner *string
	if o.OwnerTable != "" {
		owner = &o.OwnerTable
	}
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.create_sequence($1, $2, $3, $4, $5, $6, $7, $8)",
			namespace, name, o.Start, o.Increment, o.Min, o.Max, o.Cycle, owner)
		return err
	})
}

// DropSequence drops a sequence; false when the role sees none of that name.
func (c *Catalog) DropSequence(ctx context.Context, namespace, name string) (bool, error) {
	var ok bool
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.drop_sequence($1, $2)", namespace, name).Scan(&ok)
	})
	return ok, err
}

// DropTableSequences drops the sequences owned by a table's columns.
func (c *Catalog) DropTableSequences(ctx context.Context, tableID string) error {
	return c.run(ctx, func(q querier) error {
		_, err := q.Exec(ctx, "SELECT lakesoul.drop_table_sequences($1)", tableID)
		return err
	})
}

// NextVal advances a sequence (42P01 when the role sees none of that name).
func (c *Catalog) NextVal(ctx context.Context, namespace, name string) (int64, error) {
	var v int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.seq_nextval($1, $2)", namespace, name).Scan(&v)
	})
	return v, err
}

// SetVal sets a sequence's value, as PostgreSQL's setval.
func (c *Catalog) SetVal(ctx context.Context, namespace, name string, value int64, isCalled bool) (int64, error) {
	var v int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.seq_setval($1, $2, $3, $4)", namespace, name, value, isCalled).Scan(&v)
	})
	return v, err
}

// SequenceID is the registry id of sequence name of namespace, whose object
// is lakesoul_seq."s<id>"; false when the role sees no such sequence.
func (c *Catalog) SequenceID(ctx context.Context, namespace, name string) (int64, bool, error) {
	var id int64
	err := c.run(ctx, func(q querier) error {
		return q.QueryRow(ctx, "SELECT lakesoul.seq_id($1, $2)", namespace, name).Scan(&id)
	})
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == sqlerr.UndefinedTable {
		return 0, false, nil
	}
	return id, err == nil, err
}

// SetSequenceOwner records the table whose column owns a sequence ("": none),
// as ALTER SEQUENCE … OWNED BY does: DropTableSequences drops it with the
// table. False when the role sees no such sequence.
func (c *Catalog) SetSequenceOwner(ctx context.Context, namespace, name, tableID string) (bool, error) {
	var owner *string
	if tableID != "" {
		owner = &tableID
	}
	var ok bool
	err := c.run(ctx, func(q querier) error {
		tag, err := q.Exec(ctx, "UPDATE lakesoul.sequence SET owner_table = $3 WHERE namespace = lakesoul.seq_namespace($1) AND name = $2",
			namespace, name, owner)
		ok = err == nil && tag.RowsAffected() == 1
		return err
	})
	return ok, err
}

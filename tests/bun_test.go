package tests

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/driver/pgdriver"
	"github.com/uptrace/bun/migrate"
)

// bunUser is a bun model: a bigserial key, NOT NULL text, a varchar[]
// column, a defaulted timestamptz.
type bunUser struct {
	bun.BaseModel `bun:"table:users,alias:u"`
	ID            int64     `bun:",pk,autoincrement"`
	Name          string    `bun:",notnull"`
	Age           int       `bun:",notnull,default:0"`
	Tags          []string  `bun:",array"`
	CreatedAt     time.Time `bun:",nullzero,notnull,default:current_timestamp"`
}

type bunOrder struct {
	bun.BaseModel `bun:"table:orders"`
	ID            int64 `bun:",pk"`
	UserID        int64 `bun:",notnull"`
	Total         int64
}

// TestBun: what a bun (github.com/uptrace/bun, its own pgdriver) user does
// first — bun/migrate's migrations on two starts (its lock and migration
// tables, CREATE TABLE and an index from models), CRUD with bun's query
// builders (UPDATE … SET age = age + ?), an upsert (ON CONFLICT DO
// UPDATE with EXCLUDED), bun's bulk update (WITH _data (VALUES …) UPDATE …
// FROM _data), a transaction that commits and one that rolls back, and
// introspection through information_schema.
func TestBun(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	ctx := testCtx(t)
	open := func() *bun.DB {
		conn := pgdriver.NewConnector(pgdriver.WithAddr(fmt.Sprintf("127.0.0.1:%d", srv.port)), pgdriver.WithInsecure(true),
			pgdriver.WithUser(adminRole), pgdriver.WithPassword(pw), pgdriver.WithDatabase(database),
			pgdriver.WithConnParams(map[string]any{"search_path": "orm_bun"}))
		return bun.NewDB(sql.OpenDB(conn), pgdialect.New())
	}
	db := open()
	defer db.Close()
	// bun/migrate's lock table declares table_name UNIQUE, which lake
	// tables refuse (0A000: only the primary key is unique); created
	// beforehand with table_name as the key, Init leaves it (IF NOT EXISTS).
	for _, q := range []string{"CREATE SCHEMA orm_bun",
		"CREATE TABLE orm_bun.bun_migration_locks (id bigserial, table_name varchar PRIMARY KEY)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	migrations := migrate.NewMigrations()
	migrations.Add(migrate.Migration{Name: "20260101000001", Comment: "users", Up: func(ctx context.Context, db *bun.DB) error {
		if _, err := db.NewCreateTable().Model((*bunUser)(nil)).IfNotExists().Exec(ctx); err != nil {
			return err
		}
		_, err := db.NewCreateIndex().Model((*bunUser)(nil)).Index("users_name_idx").Column("name").Exec(ctx)
		return err
	}, Down: func(ctx context.Context, db *bun.DB) error {
		_, err := db.NewDropTable().Model((*bunUser)(nil)).IfExists().Exec(ctx)
		return err
	}})
	migrations.Add(migrate.Migration{Name: "20260101000002", Comment: "orders", Up: func(ctx context.Context, db *bun.DB) error {
		_, err := db.NewCreateTable().Model((*bunOrder)(nil)).IfNotExists().Exec(ctx)
		return err
	}, Down: func(ctx context.Context, db *bun.DB) error {
		_, err := db.NewDropTable().Model((*bunOrder)(nil)).IfExists().Exec(ctx)
		return err
	}})
	start := func(what string, db *bun.DB, want int) {
		t.Helper()
		m := migrate.NewMigrator(db, migrations)
		if err := m.Init(ctx); err != nil {
			t.Fatalf("%s: Init: %v", what, err)
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatalf("%s: Lock: %v", what, err)
		}
		group, err := m.Migrate(ctx)
		if uerr := m.Unlock(ctx); uerr != nil {
			t.Fatalf("%s: Unlock: %v", what, uerr)
		}
		if err != nil {
			t.Fatalf("%s: Migrate: %v", what, err)
		}
		if len(group.Migrations) != want {
			t.Fatalf("%s: applied %d migrations, want %d", what, len(group.Migrations), want)
		}
	}
	start("first start", db, 2)
	restarted := open()
	defer restarted.Close()
	start("second start", restarted, 0)

	// CRUD.
	users := []bunUser{{Name: "ann", Age: 30, Tags: []string{"a", "b"}}, {Name: "bob", Age: 40}}
	if _, err := db.NewInsert().Model(&users).Returning("id, created_at").Exec(ctx); err != nil {
		t.Fatalf("insert: %v", err)
	}
	if users[0].ID == 0 || users[1].ID == users[0].ID || users[0].CreatedAt.IsZero() {
		t.Fatalf("RETURNING gave %+v", users)
	}
	if _, err := db.NewUpdate().Model((*bunUser)(nil)).Set("age = age + ?", 5).Where("id = ?", users[0].ID).Exec(ctx); err != nil {
		t.Fatalf("update age + ?: %v", err)
	}
	var got bunUser
	if err := db.NewSelect().Model(&got).Where("name = ?", "ann").Scan(ctx); err != nil {
		t.Fatalf("select: %v", err)
	}
	if got.Age != 35 || strings.Join(got.Tags, ",") != "a,b" {
		t.Errorf("ann: %+v", got)
	}

	// Upsert: ON CONFLICT (id) DO UPDATE SET … EXCLUDED.
	up := bunUser{ID: users[1].ID, Name: "robert", Age: 41}
	if _, err := db.NewInsert().Model(&up).On("CONFLICT (id) DO UPDATE").Set("name = EXCLUDED.name").Set("age = EXCLUDED.age").Exec(ctx); err != nil {
		t.Fatalf("upsert: %v", err)
	}
	// Bulk update: WITH _data (VALUES …) UPDATE users AS u … FROM _data.
	bulk := []bunUser{{ID: users[0].ID, Name: "anna", Age: 36}, {ID: users[1].ID, Name: "rob", Age: 42}}
	if _, err := db.NewUpdate().With("_data", db.NewValues(&bulk)).Model((*bunUser)(nil)).TableExpr("_data").
		Set("name = _data.name").Set("age = _data.age").Where("u.id = _data.id").Exec(ctx); err != nil {
		t.Fatalf("bulk update: %v", err)
	}

	// A transaction that commits, one that rolls back.
	err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&bunOrder{ID: 1, UserID: users[0].ID, Total: 100}).Exec(ctx); err != nil {
			return err
		}
		_, err := tx.NewUpdate().Model((*bunUser)(nil)).Set("age = age + 1").Where("id = ?", users[0].ID).Exec(ctx)
		return err
	})
	if err != nil {
		t.Fatalf("transaction: %v", err)
	}
	errRollback := fmt.Errorf("roll back")
	err = db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if _, err := tx.NewInsert().Model(&bunOrder{ID: 2, UserID: users[1].ID, Total: 5}).Exec(ctx); err != nil {
			return err
		}
		return errRollback
	})
	if err != errRollback {
		t.Fatalf("rolled-back transaction: %v", err)
	}
	if _, err := db.NewDelete().Model((*bunUser)(nil)).Where("name = ?", "nobody").Exec(ctx); err != nil {
		t.Fatalf("delete: %v", err)
	}

	var all []bunUser
	if err := db.NewSelect().Model(&all).Order("id").Scan(ctx); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, u := range all {
		rows = append(rows, fmt.Sprintf("%s|%d|%s", u.Name, u.Age, strings.Join(u.Tags, ",")))
	}
	wantRows(t, "users", rows, []string{"anna|37|a,b", "rob|42|"})
	n, err := db.NewSelect().Model((*bunOrder)(nil)).Count(ctx)
	if err != nil || n != 1 {
		t.Errorf("orders: %d, %v; want 1 (the second transaction rolled back)", n, err)
	}

	// Introspection as bun users write it.
	var cols []struct {
		ColumnName string `bun:"column_name"`
		DataType   string `bun:"data_type"`
		IsNullable string `bun:"is_nullable"`
	}
	if err := db.NewRaw(`SELECT column_name, data_type, is_nullable FROM information_schema.columns
		WHERE table_schema = ? AND table_name = ? ORDER BY ordinal_position`, "orm_bun", "users").Scan(ctx, &cols); err != nil {
		t.Fatalf("information_schema.columns: %v", err)
	}
	var desc []string
	for _, c := range cols {
		desc = append(desc, c.ColumnName+" "+c.DataType+" "+c.IsNullable)
	}
	wantRows(t, "columns", desc, []string{"id bigint NO", "name character varying NO", "age bigint NO",
		"tags ARRAY YES", "created_at timestamp with time zone NO"})
}

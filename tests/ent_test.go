package tests

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"entgo.io/ent/dialect"
	entsql "entgo.io/ent/dialect/sql"
	"entgo.io/ent/dialect/sql/schema"
	"entgo.io/ent/schema/field"
)

// TestEnt: ent's runtime as generated ent code drives it, without the code
// generator — the schema migration (Atlas inspecting the database) at two
// starts, inserts with RETURNING, ent's AddAge (UPDATE … SET age =
// COALESCE(age, 0) + $1), an upsert (ON CONFLICT … DO UPDATE SET …
// EXCLUDED), a transaction that commits and one that rolls back.
func TestEnt(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	ctx := testCtx(t)
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=disable search_path=orm_ent",
		srv.port, adminRole, pw, database)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE SCHEMA orm_ent"); err != nil {
		t.Fatal(err)
	}
	users := &schema.Table{Name: "users", Columns: []*schema.Column{
		{Name: "id", Type: field.TypeInt, Increment: true},
		{Name: "name", Type: field.TypeString},
		{Name: "age", Type: field.TypeInt, Default: 0},
		{Name: "nickname", Type: field.TypeString, Nullable: true},
	}}
	users.PrimaryKey = users.Columns[:1]
	users.Indexes = []*schema.Index{{Name: "user_name", Columns: users.Columns[1:2]}}
	migrateOnce := func(what string) {
		t.Helper()
		drv := entsql.OpenDB(dialect.Postgres, db)
		m, err := schema.NewMigrate(drv)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := m.Create(ctx, users); err != nil {
			t.Fatalf("%s: Schema.Create: %v", what, err)
		}
	}
	migrateOnce("first start")
	migrateOnce("second start")

	drv := entsql.OpenDB(dialect.Postgres, db)
	var ids []int
	for _, name := range []string{"ann", "bob"} {
		q, args := entsql.Dialect(dialect.Postgres).Insert("users").Columns("name", "age").Values(name, 30).Returning("id").Query()
		var rows entsql.Rows
		if err := drv.Query(ctx, q, args, &rows); err != nil {
			t.Fatalf("insert: %v", err)
		}
		for rows.Next() {
			var id int
			if err := rows.Scan(&id); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
	}
	if len(ids) != 2 || ids[0] == ids[1] {
		t.Fatalf("ids %v", ids)
	}
	// AddAge, as ent generates it.
	q, args := entsql.Dialect(dialect.Postgres).Update("users").Add("age", 5).Where(entsql.EQ("id", ids[0])).Query()
	if err := drv.Exec(ctx, q, args, nil); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	// Upsert: OnConflict(Columns(id)).UpdateNewValues().
	q, args = entsql.Dialect(dialect.Postgres).Insert("users").Columns("id", "name", "age").Values(ids[1], "robert", 41).
		OnConflict(entsql.ConflictColumns("id"), entsql.ResolveWithNewValues()).Query()
	if err := drv.Exec(ctx, q, args, nil); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	// A transaction that commits, one that rolls back.
	tx, err := drv.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, args = entsql.Dialect(dialect.Postgres).Update("users").Set("nickname", "annie").Where(entsql.EQ("id", ids[0])).Query()
	if err := tx.Exec(ctx, q, args, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, err = drv.Tx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q, args = entsql.Dialect(dialect.Postgres).Delete("users").Query()
	if err := tx.Exec(ctx, q, args, nil); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(ctx, "SELECT name, age, coalesce(nickname, '-') FROM users ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var name, nick string
		var age int
		if err := rows.Scan(&name, &age, &nick); err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.Join([]string{name, fmt.Sprint(age), nick}, "|"))
	}
	wantRows(t, "users", got, []string{"ann|35|annie", "robert|41|-"})
}

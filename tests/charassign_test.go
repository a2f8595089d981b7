package tests

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestCharAssignment: a value written into a varchar(n) or char(n) column
// takes PostgreSQL's assignment rules on every write path — INSERT VALUES
// and SELECT, UPDATE SET (and what RETURNING shows of them), ON CONFLICT DO UPDATE SET, MERGE UPDATE and
// INSERT, COPY text and csv: longer than n is 22001 "value too long for
// type …(n)" unless the excess is spaces, which are cut, and char(n)
// ignores trailing spaces (so 'k ' and 'k' are one key of a char(n) key
// column). Each statement runs against lakesoul serve and PostgreSQL and
// must give the same outcome and leave the same rows.
func TestCharAssignment(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	ctx := testCtx(t)
	lake := srv.connect(t)
	ref := srv.referenceDB(t, "charasg_ref")
	mustExec(t, ctx, ref, "CREATE SCHEMA charasg")
	mustExec(t, ctx, lake, "CREATE SCHEMA charasg")

	values := []string{"k", "kk", "k   ", "kk  ", "kkk", "kkk ", "éé ", " k"}
	// Write paths: statements writing value {V} (a literal) into column c
	// of row {I} of table {T}, after seed (if any) ran; COPY paths send a
	// row of data instead.
	paths := []struct {
		name, seed, stmt string
	}{
		{"insert values", "", "INSERT INTO {T} VALUES ({I}, {V})"},
		{"insert select", "", "INSERT INTO {T} SELECT {I}, {V}"},
		{"insert returning", "", "INSERT INTO {T} VALUES ({I}, {V}) RETURNING c::text, length(c::text)"},
		{"update", "INSERT INTO {T} VALUES ({I}, 'a')", "UPDATE {T} SET c = {V} WHERE id = {I}"},
		{"update returning", "INSERT INTO {T} VALUES ({I}, 'a')", "UPDATE {T} SET c = {V} WHERE id = {I} RETURNING c::text, length(c::text)"},
		{"on conflict", "INSERT INTO {T} VALUES ({I}, 'a')", "INSERT INTO {T} VALUES ({I}, 'z') ON CONFLICT (id) DO UPDATE SET c = {V}"},
		{"merge update", "INSERT INTO {T} VALUES ({I}, 'a')", "MERGE INTO {T} USING (SELECT {I} AS id, {V} AS c) s ON {T}.id = s.id WHEN MATCHED THEN UPDATE SET c = s.c"},
		{"merge insert", "", "MERGE INTO {T} USING (SELECT {I} AS id, {V} AS c) s ON {T}.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.c)"},
		{"copy text", "", "COPY {T} FROM STDIN"},
		{"copy csv", "", "COPY {T} FROM STDIN WITH (FORMAT csv)"},
	}
	n := 0
	for _, typ := range []string{"varchar(2)", "char(2)"} {
		for _, p := range paths {
			n++
			table := fmt.Sprintf("charasg.t%d", n)
			create := fmt.Sprintf("CREATE TABLE %s (id int PRIMARY KEY, c %s)", table, typ)
			mustExec(t, ctx, lake, create)
			mustExec(t, ctx, ref, create)
			for i, v := range values {
				r := strings.NewReplacer("{T}", table, "{I}", fmt.Sprint(i), "{V}", "'"+v+"'")
				if p.seed != "" {
					seed := r.Replace(p.seed)
					mustExec(t, ctx, lake, seed)
					mustExec(t, ctx, ref, seed)
				}
				q := r.Replace(p.stmt)
				var got, want string
				if strings.HasPrefix(q, "COPY") {
					data := fmt.Sprintf("%d\t%s\n", i, v)
					if strings.Contains(q, "csv") {
						data = fmt.Sprintf("%d,%s\n", i, v)
					}
					got, want = copyOutcome(ctx, lake, q, data), copyOutcome(ctx, ref, q, data)
				} else {
					got, want = twiceOutcome(ctx, lake, q), twiceOutcome(ctx, ref, q)
				}
				if got != want {
					t.Errorf("%s (%s, %q): lakesoul %s, postgres %s", q, p.name, v, got, want)
				}
			}
			check := fmt.Sprintf("SELECT id, c::text, length(c::text), c = 'k', c = 'kk' FROM %s ORDER BY id", table)
			if got, want := checkRows(t, ctx, lake, check), checkRows(t, ctx, ref, check); got != want {
				t.Errorf("%s into %s: lakesoul rows %s, postgres %s", p.name, typ, got, want)
			}
		}
	}
	// Key columns: char(n) keys ignore trailing spaces, varchar(n) keys
	// keep those within the length.
	for _, typ := range []string{"varchar(2)", "char(2)"} {
		n++
		table := fmt.Sprintf("charasg.t%d", n)
		steps := []string{
			fmt.Sprintf("CREATE TABLE %s (k %s PRIMARY KEY, v int)", table, typ),
			fmt.Sprintf("INSERT INTO %s VALUES ('k', 1)", table),
			fmt.Sprintf("INSERT INTO %s VALUES ('k ', 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v", table),
			fmt.Sprintf("INSERT INTO %s VALUES ('k   ', 4) ON CONFLICT (k) DO UPDATE SET v = %s.v + excluded.v", table, table),
			fmt.Sprintf("INSERT INTO %s VALUES ('kkk', 8) ON CONFLICT (k) DO NOTHING", table),
			fmt.Sprintf("SELECT k::text, length(k::text), v FROM %s ORDER BY 1, 3", table),
		}
		for _, q := range steps {
			if got, want := twiceOutcome(ctx, lake, q), twiceOutcome(ctx, ref, q); got != want {
				t.Errorf("%s: lakesoul %s, postgres %s", q, got, want)
			}
		}
	}
}

// copyOutcome is COPY q of data's outcome: its error or command tag.
func copyOutcome(ctx context.Context, c *pgx.Conn, q, data string) string {
	tag, err := c.PgConn().CopyFrom(ctx, strings.NewReader(data), q)
	if err != nil {
		return "ERROR " + pgCode(err) + " " + errorText(err)
	}
	return tag.String()
}

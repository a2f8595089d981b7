package engine

import (
	"context"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
	"github.com/lakesoul-go/lakesoul/objstore"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// Who may create in a namespace (issue 31, item 3a), over every statement
// kind the engine plans that writes (routes): each is classified below, so
// a writing statement added later without a decision fails the test.

// namespaceObjectStatements create, alter or drop objects of the default
// namespace (PostgreSQL's public): a role without CREATE there is refused
// each (42501), and runs it once granted CREATE ON SCHEMA public.
var namespaceObjectStatements = []string{
	"CREATE TABLE public.nr_new (id int)",
	"CREATE TABLE public.nr_ctas AS SELECT id FROM public.nr_t",
	"SELECT id INTO public.nr_into FROM public.nr_t",
	"CREATE VIEW public.nr_v2 AS SELECT id FROM public.nr_t",
	"CREATE OR REPLACE VIEW public.nr_v AS SELECT id, v FROM public.nr_t",
	"CREATE SEQUENCE public.nr_q2",
	"ALTER SEQUENCE public.nr_q OWNED BY public.nr_t.id",
	"ALTER TABLE public.nr_t ADD COLUMN w int",
	"ALTER TABLE public.nr_t ALTER COLUMN v SET DEFAULT 'x'",
	"ALTER TABLE public.nr_t SET (partition.ttl = '3')",
	"ALTER TABLE public.nr_t RENAME COLUMN v TO v2",
	"ALTER VIEW public.nr_v RENAME TO nr_v3",
	"CREATE INDEX nr_i2 ON public.nr_t (id)",
	"COMMENT ON TABLE public.nr_t IS 'mine'",
	"CREATE TYPE public.nr_e2 AS ENUM ('a')",
	"ALTER TYPE public.nr_e ADD VALUE 'z'",
	"DROP INDEX public.nr_i",
	"DROP VIEW public.nr_v",
	"DROP SEQUENCE public.nr_q",
	"DROP TYPE public.nr_e",
	"DROP TABLE public.nr_t",
}

// namespaceRefusedStatements stay refused after the grant: they need more
// than CREATE in the namespace (a namespace's domain's admins, a
// superuser, the namespace's owner).
var namespaceRefusedStatements = []string{
	"CREATE SCHEMA nr_s",
	"GRANT CREATE ON SCHEMA public TO nr_other",
	"CREATE SUBSCRIPTION nr_sub CONNECTION 'host=/nonexistent dbname=x' PUBLICATION p",
	"ALTER SUBSCRIPTION nr_sub DISABLE",
	"DROP SUBSCRIPTION nr_sub",
	"GRANT nr_ws TO nr_other",
}

// namespaceDataStatements use the default namespace's objects without
// changing what they are: every role may (LakeSoul's public domain), with
// or without CREATE. ALTER … OWNER TO the lake owner changes nothing, and
// neither does CREATE EXTENSION of an extension the engine serves.
var namespaceDataStatements = []string{
	"INSERT INTO public.nr_t VALUES (1, 'a')",
	"UPDATE public.nr_t SET v = 'b' WHERE id = 1",
	"DELETE FROM public.nr_t WHERE id = 2",
	"MERGE INTO public.nr_t USING (SELECT 3 AS id) s ON nr_t.id = s.id WHEN NOT MATCHED THEN INSERT VALUES (s.id, 'm')",
	"COPY public.nr_t TO STDOUT",
	"TRUNCATE public.nr_t",
	"CALL lakesoul.compact('public.nr_t')",
	"VACUUM public.nr_t",
	`CREATE EXTENSION IF NOT EXISTS "uuid-ossp"`,
}

func TestNamespaceRightsEveryWritingStatement(t *testing.T) {
	ctx := context.Background()
	classified := map[reflect.Type]bool{}
	for _, list := range [][]string{namespaceObjectStatements, namespaceRefusedStatements, namespaceDataStatements,
		{"ALTER SCHEMA \"default\" OWNER TO nr_user"}} {
		for _, q := range list {
			tree, err := pg_query.Parse(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			classified[reflect.TypeOf(tree.Stmts[0].Stmt.Node)] = true
		}
	}
	for _, r := range routes {
		if r.writes && !classified[reflect.TypeOf(r.node)] {
			t.Errorf("statement kind %q writes but no statement of it is classified here: decide who may run it on another role's namespace", r.shown)
		}
	}

	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cat.Close)
	e, err := New(ctx, Config{Catalog: cat, Store: objstore.Local{}, Warehouse: objstore.LocalURI(filepath.Join(t.TempDir(), "wh")), Logger: slog.Default()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	session := func(user string) func(q string) error {
		ps, err := e.NewSession(ctx, map[string]string{"user": user, "database": DatabaseName}, pgwire.Credential{})
		if err != nil {
			t.Fatal(err)
		}
		s := ps.(*Session)
		t.Cleanup(s.Close)
		return func(q string) error { return runInternal(ctx, s, q) }
	}
	admin := session(e.catalogRole)
	must := func(run func(string) error, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if err := run(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	must(admin, "SELECT lakesoul.create_workspace('nr_ws')", "SELECT lakesoul.create_user('nr_user', 'pw', 'nr_ws')",
		"SELECT lakesoul.create_user('nr_other', 'pw', 'nr_ws')")
	fixtures := func() {
		t.Helper()
		must(admin, "DROP TABLE IF EXISTS public.nr_t", "DROP VIEW IF EXISTS public.nr_v", "DROP VIEW IF EXISTS public.nr_v3",
			"DROP SEQUENCE IF EXISTS public.nr_q", "DROP TYPE IF EXISTS public.nr_e CASCADE",
			"CREATE TABLE public.nr_t (id bigint PRIMARY KEY, v text)", "INSERT INTO public.nr_t VALUES (1, 'a'), (2, 'b')",
			"CREATE VIEW public.nr_v AS SELECT id FROM public.nr_t", "CREATE SEQUENCE public.nr_q",
			"CREATE TYPE public.nr_e AS ENUM ('x')", "CREATE INDEX nr_i ON public.nr_t (v)")
	}
	user := session("nr_user")
	fixtures()
	// ALTER SCHEMA … OWNER TO the lake owner is accepted and changes
	// nothing (pg_dump's restore sends it); to anyone else it is 0A000.
	if err := user("ALTER SCHEMA \"default\" OWNER TO " + e.catalogRole); err != nil {
		t.Errorf("ALTER SCHEMA \"default\" OWNER TO the lake owner: %v", err)
	}
	if err := user("ALTER SCHEMA \"default\" OWNER TO nr_user"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("ALTER SCHEMA \"default\" OWNER TO nr_user: %v, want 0A000", err)
	}
	for _, q := range namespaceObjectStatements {
		if err := user(q); sqlerr.Code(err) != sqlerr.InsufficientPrivilege {
			t.Errorf("without CREATE: %s: %v, want 42501", q, err)
		} else if strings.HasPrefix(q, "CREATE") && !strings.Contains(q, "OR REPLACE") && !strings.Contains(err.Error(), "permission denied for schema public") {
			t.Errorf("without CREATE: %s: %q, want PostgreSQL's \"permission denied for schema public\"", q, err.Error())
		}
	}
	for _, q := range append(namespaceDataStatements, namespaceRefusedStatements...) {
		if err := user(q); err != nil && !strings.Contains(strings.Join(namespaceRefusedStatements, "\n"), q) {
			t.Errorf("data statement: %s: %v", q, err)
		} else if err == nil && strings.Contains(strings.Join(namespaceRefusedStatements, "\n"), q) {
			t.Errorf("%s: succeeded for a workspace user", q)
		}
	}

	must(admin, "GRANT CREATE ON SCHEMA public TO nr_user")
	for _, q := range namespaceObjectStatements {
		fixtures()
		if err := user(q); err != nil {
			t.Errorf("with CREATE: %s: %v", q, err)
		}
	}
	for _, q := range namespaceRefusedStatements {
		if err := user(q); err == nil {
			t.Errorf("with CREATE: %s succeeded", q)
		}
	}
	must(admin, "REVOKE CREATE ON SCHEMA public FROM nr_user")
	fixtures()
	if err := user("CREATE TABLE public.nr_after (id int)"); sqlerr.Code(err) != sqlerr.InsufficientPrivilege {
		t.Errorf("after REVOKE: %v, want 42501", err)
	}
	// PUBLIC as the grantee gives back PostgreSQL 14's public schema.
	must(admin, "GRANT CREATE ON SCHEMA public TO PUBLIC")
	must(user, "CREATE TABLE public.nr_public (id int)")
	must(admin, "REVOKE ALL ON SCHEMA public FROM PUBLIC")
	if err := user("DROP TABLE public.nr_public"); sqlerr.Code(err) != sqlerr.InsufficientPrivilege ||
		!strings.Contains(err.Error(), "must be owner of table nr_public") {
		t.Errorf("DROP after REVOKE ALL: %v, want 42501 must be owner of table nr_public", err)
	}
	if err := admin("GRANT SELECT ON public.nr_t TO nr_user"); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("GRANT on a table: %v, want 0A000", err)
	}
	if err := admin("GRANT CREATE ON SCHEMA public TO nr_nobody"); sqlerr.Code(err) != sqlerr.UndefinedObject {
		t.Errorf("GRANT to a missing role: %v, want 42704", err)
	}
	if err := admin("CREATE SCHEMA public"); sqlerr.Code(err) != sqlerr.DuplicateSchema {
		t.Errorf("CREATE SCHEMA public: %v, want 42P06 (the default namespace is public)", err)
	}
}

// runInternal runs every statement of q on s, discarding rows.
func runInternal(ctx context.Context, s *Session, q string) error {
	stmts, err := s.Parse(ctx, q, nil)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		p, err := st.Bind(ctx, nil)
		if err != nil {
			return err
		}
		_, _, err = p.Execute(ctx, 0, discard{})
		p.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

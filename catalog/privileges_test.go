package catalog_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/pgtest"
)

// The catalog's privileges, closed by default (migration 22,
// sqlfuncs/990_privileges.sql). TestCatalogPrivileges enumerates every
// relation, sequence, function (procedures and aggregates too), type and
// schema of a migrated catalog database, and the database itself, and checks
// what each kind of workspace role may do with it against the design's table
// below. An object the table does not name may be used by nobody but the
// catalog owner; a relation a workspace role may use without row-level
// security, a view that reads as its owner, a SECURITY DEFINER function, a
// grant to PUBLIC — each must be named here, so one added later fails the
// test until someone decided it.
//
// Privileges are PostgreSQL's ACL letters: relations r (SELECT) a (INSERT)
// w (UPDATE) d (DELETE) D (TRUNCATE) x (REFERENCES) t (TRIGGER) m
// (MAINTAIN); sequences r w U (USAGE); functions X; types U; schemas U C
// (CREATE); the database c (CONNECT) C T (TEMPORARY).

// grant is what the design grants one object: the privileges of each class
// of role. A role has the privileges of every class it belongs to: every
// role is PUBLIC; workspace users and <ws>_users are base_user_role,
// workspace administrators and <ws>_admins base_admin_role; LakeSoul's
// base_super_admin_role is granted to nobody by LakeSoul-Go.
type grant struct {
	public, user, admin, super string
	// noRLS: a table whose grantees read it without row-level security.
	noRLS bool
	// definer: a view that reads as its owner (it filters rows itself).
	definer bool
}

func workspace(privs string) grant { return grant{user: privs, admin: privs, super: privs} }

// designRelations is every relation (table, view, sequence) of the catalog
// and what it grants; lakesoul_pg's relations follow the rule of
// lakesoul_pg below, lakesoul_seq's sequences the rule of sequences.
var designRelations = map[string]grant{
	// LakeSoul's tables: its RBAC grants (reference §7.1), rows under
	// row-level security by domain.
	"public.namespace":                    {user: "r", admin: "rawd", super: "rawd"},
	"public.table_info":                   workspace("rawd"),
	"public.table_name_id":                workspace("rawd"),
	"public.table_path_id":                workspace("rawd"),
	"public.data_commit_info":             workspace("rawd"),
	"public.partition_info":               workspace("rawd"),
	"public.discard_compressed_file_info": workspace("rawd"),
	"public.global_config":                {user: "r", admin: "r", super: "rawd", noRLS: true},
	"public.lakesoul_go_migrations":       {},
	// LakeSoul-Go's own.
	"lakesoul.access_key":             {},
	"lakesoul.access_keys":            {public: "r", definer: true},
	"lakesoul.column_index":           {public: "r", user: "rawd", admin: "rawd", super: "rawd"},
	"lakesoul.column_index_oid_seq":   workspace("U"),
	"lakesoul.compaction_job":         {},
	"lakesoul.compaction_task":        {},
	"lakesoul.domain_level_assets":    workspace("r"),
	"lakesoul.namespace_level_assets": workspace("r"),
	"lakesoul.table_level_assets":     workspace("r"),
	"lakesoul.partition_level_assets": workspace("r"),
	"lakesoul.enum_label":             {public: "r", user: "rawd", admin: "rawd", super: "rawd"},
	"lakesoul.enum_type":              {public: "r", user: "rawd", admin: "rawd", super: "rawd"},
	"lakesoul.flight_ticket_key":      {},
	"lakesoul.namespace_grant":        {public: "r"},
	"lakesoul.namespace_oid":          workspace("rawd"),
	"lakesoul.object_oid_seq":         workspace("rU"),
	"lakesoul.partition_registry":     workspace("rawd"),
	"lakesoul.sequence":               {public: "r", user: "rad", admin: "rad", super: "rad"},
	"lakesoul.sequence_id_seq":        workspace("U"),
	"lakesoul.subscription":           {},
	"lakesoul.subscription_table":     {},
	"lakesoul.subscriptions":          {public: "r", definer: true},
	"lakesoul.table_created":          workspace("rawd"),
	"lakesoul.table_dir":              workspace("rad"),
	"lakesoul.table_oid":              workspace("rawd"),
	"lakesoul.tables":                 {public: "r"},
	"lakesoul.vector_index":           {public: "r", user: "rawd", admin: "rawd", super: "rawd"},
	"lakesoul.vector_index_segment":   workspace("rawd"),
	"lakesoul.view":                   {public: "r", user: "rawd", admin: "rawd", super: "rawd"},
	"lakesoul.write_intent":           {},
	"lakesoul.write_intent_seq":       {},
}

// lakesoul_pg is the pg_catalog emulation any login reads: views that read
// as the invoker, readable by PUBLIC, and SECURITY INVOKER helper functions
// PUBLIC may call.
var (
	emulationView = grant{public: "r"}
	emulationFunc = grant{public: "X"}
)

// designFunctions is every function of schema lakesoul (all overloads of a
// name) that some role besides the owner may call.
var designFunctions = map[string]grant{
	// Row-level security predicates, called by the policies as the reader.
	"domain_visible": {public: "X"},
	"domain_admin":   {public: "X"},
}

// workspaceFunctions are what the server calls as a session's role, and
// what those call in turn.
var workspaceFunctions = []string{
	"add_primary_key", "add_primary_key_emptying", "alter_table", "change_commits", "change_files", "check_existed", "check_partition",
	"cleanup", "cleanup_files", "cleanup_partition", "commit", "commit_lock_rows", "commit_many", "commit_one_partition",
	"compact_targets", "create_access_key", "create_enum", "create_namespace", "create_sequence",
	"create_table", "create_view", "default_workspace", "drop_enum", "drop_namespace", "drop_partition",
	"drop_sequence", "drop_sequence_object", "drop_table", "drop_table_by_id", "drop_table_sequences",
	"drop_view", "enum_add_value", "enum_check_former", "enum_check_label", "enum_dependents",
	"enum_rename_value", "enum_type_oid", "epoch_ms", "free_table_dir", "history", "import_target",
	"live_files", "live_files_cached", "live_files_matching", "lock_rows", "ms_timestamptz", "partition_changes",
	"partition_desc_terms", "partition_versions",
	"partition_lock", "record_table_dir", "relation_name_taken", "rename_column", "rename_namespace", "rename_table",
	"rename_view", "replay", "resolve_table", "revoke_access_key", "rollback", "rollback_partition",
	"seq_id", "seq_namespace", "seq_nextval", "seq_setval", "sequence_object", "set_view_definition",
	"snapshot_files", "table_domain", "table_label", "truncate", "write_intent_consume",
	"write_intent_verify", "xact_lock",
	// The namespace rights' trigger predicates and GRANT … ON SCHEMA
	// (sqlfuncs/170_namespace_rights.sql, catalog/properties.go).
	"face_namespace", "grant_namespace", "internal_column_key", "internal_property", "may_create",
	"server_session",
}

// securityDefiners are the functions that run as their owner. Each checks
// its caller itself; the triggers' are callable by nobody (a trigger fires
// without EXECUTE).
var securityDefiners = []string{
	"lakesoul.xact_lock",                // refuses every login but the server's
	"lakesoul.lock_rows",                // refuses every login but the server's
	"lakesoul.write_intent_consume",     // needs the intent's secret token
	"lakesoul.sequence_object",          // creates the object of a registry row the caller wrote
	"lakesoul.drop_sequence_object",     // drops the object of a registry row that is gone
	"lakesoul.enum_dependents",          // reads which columns use an enum type
	"lakesoul.create_access_key",        // the caller's own key
	"lakesoul.revoke_access_key",        // the caller's own key
	"lakesoul.register_partition",       // trigger
	"lakesoul.compaction_enqueue",       // trigger
	"lakesoul.compaction_table_dropped", // trigger
	"lakesoul.register_table_oid",       // trigger: OIDs of tables LakeSoul's engines create
	"lakesoul.register_namespace_oid",   // trigger: OIDs of their namespaces
	"lakesoul.server_session",           // reads only who the session logged in as
}

// designTypes is every type the catalog defines (besides the row and array
// types of its relations).
var designTypes = map[string]grant{
	"public.data_file_op": {public: "U"},
	"public.vector":       {public: "U"},
}

// designSchemas is every schema of the database; nobody but the owner
// creates objects in any of them.
var designSchemas = map[string]grant{
	"pg_catalog":         {public: "U"},
	"information_schema": {public: "U"},
	"public":             {public: "U"},
	"lakesoul":           workspace("U"),
	"lakesoul_pg":        {public: "U"},
	"lakesoul_seq":       {public: "U"},
}

// designDatabase is PostgreSQL's default: anyone connects and has
// temporary objects; nobody creates schemas.
var designDatabase = grant{public: "cT"}

// modifiedBuiltins are the functions of PostgreSQL itself whose privileges
// the catalog changed: the advisory locks are the commit protocol's
// (migration 10), so no workspace role may take them.
var modifiedBuiltins = []string{
	"pg_advisory_lock(bigint)", "pg_advisory_lock(integer,integer)",
	"pg_advisory_lock_shared(bigint)", "pg_advisory_lock_shared(integer,integer)",
	"pg_advisory_xact_lock(bigint)", "pg_advisory_xact_lock(integer,integer)",
	"pg_advisory_xact_lock_shared(bigint)", "pg_advisory_xact_lock_shared(integer,integer)",
	"pg_try_advisory_lock(bigint)", "pg_try_advisory_lock(integer,integer)",
	"pg_try_advisory_lock_shared(bigint)", "pg_try_advisory_lock_shared(integer,integer)",
	"pg_try_advisory_xact_lock(bigint)", "pg_try_advisory_xact_lock(integer,integer)",
	"pg_try_advisory_xact_lock_shared(bigint)", "pg_try_advisory_xact_lock_shared(integer,integer)",
}

// probe is a role whose privileges the test reads: its classes, and
// whether it is a member of the workspace (sequences of lake namespaces are
// granted to their workspace's role, or to PUBLIC in the public domain).
type probe struct {
	role     string
	classes  []string // of "user", "admin", "super" (PUBLIC always)
	inDomain bool
}

func (p probe) want(g grant) string {
	out := g.public
	for _, c := range p.classes {
		switch c {
		case "user":
			out += g.user
		case "admin":
			out += g.admin
		case "super":
			out += g.super
		}
	}
	return out
}

// letters orders a set of ACL letters canonically, without repeats.
func letters(s string) string {
	b := []byte(s)
	slices.Sort(b)
	return string(slices.Compact(b))
}

func TestCatalogPrivileges(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.DSN(t)
	if err := catalog.MigrateUp(ctx, dsn); err != nil {
		t.Fatal(err)
	}
	owner, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close(ctx)
	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := owner.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}

	// A workspace with a user and an administrator, and a login of no
	// workspace (PUBLIC's privileges alone). Roles are cluster-wide.
	var r [4]byte
	_, _ = rand.Read(r[:])
	ws := "pv" + hex.EncodeToString(r[:])
	user, admin, nobody := ws+"_user", ws+"_admin", ws+"_nobody"
	exec("SELECT lakesoul.create_workspace($1)", ws)
	exec("SELECT lakesoul.create_user($1, 'pw', $2)", user, ws)
	exec("SELECT lakesoul.create_user($1, 'pw', $2, admin => true)", admin, ws)
	exec("CREATE ROLE " + nobody + " LOGIN")
	t.Cleanup(func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop the test's roles: %v", err)
			return
		}
		defer conn.Close(ctx)
		for _, role := range []string{user, admin, nobody, ws + "_users", ws + "_admins", ws} {
			if _, err := conn.Exec(ctx, "DROP OWNED BY "+role+"; DROP ROLE "+role); err != nil {
				t.Logf("drop role %s: %v", role, err)
			}
		}
	})
	// Objects made while the catalog is used: a sequence of a namespace of
	// the workspace (created as its user) and one of the public domain.
	exec("SET ROLE " + admin)
	exec("SELECT lakesoul.create_namespace($1, $2)", ws+"_ns", ws)
	exec("SET ROLE " + user)
	exec("SELECT lakesoul.create_sequence($1, 's', NULL, NULL, NULL, NULL, false, NULL)", ws+"_ns")
	exec("RESET ROLE")
	exec("SELECT lakesoul.create_sequence('default', $1, NULL, NULL, NULL, NULL, false, NULL)", ws+"_pub")

	probes := []probe{
		{role: nobody},
		{role: user, classes: []string{"user"}, inDomain: true},
		{role: admin, classes: []string{"admin"}, inDomain: true},
		{role: ws, inDomain: true},
		{role: ws + "_users", classes: []string{"user"}, inDomain: true},
		{role: ws + "_admins", classes: []string{"admin"}, inDomain: true},
		{role: "base_user_role", classes: []string{"user"}},
		{role: "base_admin_role", classes: []string{"admin"}},
		{role: "base_super_admin_role", classes: []string{"super"}},
	}
	var roles []string
	for _, p := range probes {
		roles = append(roles, p.role)
	}
	var pg17 bool
	if err := owner.QueryRow(ctx, "SELECT current_setting('server_version_num')::int >= 170000").Scan(&pg17); err != nil {
		t.Fatal(err)
	}

	c := &privChecker{t: t, ctx: ctx, conn: owner, probes: probes, roles: roles}
	c.schemas()
	c.database()
	c.relations(pg17)
	c.columns()
	c.functions()
	c.types()
	baseline, err := pgx.Connect(ctx, pgtest.DSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer baseline.Close(ctx)
	c.builtins(baseline)
}

type privChecker struct {
	t      *testing.T
	ctx    context.Context
	conn   *pgx.Conn
	probes []probe
	roles  []string
	// creatable: schemas some probe may create objects in.
	creatable map[string]bool
}

// privileges runs q, which yields (object name, role name, letters), and
// returns letters by object and role.
func (c *privChecker) privileges(q string, args ...any) map[string]map[string]string {
	c.t.Helper()
	rows, err := c.conn.Query(c.ctx, q, args...)
	if err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	out := map[string]map[string]string{}
	var obj, role, privs string
	if _, err := pgx.ForEachRow(rows, []any{&obj, &role, &privs}, func() error {
		if out[obj] == nil {
			out[obj] = map[string]string{}
		}
		out[obj][role] = letters(privs)
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// check compares every probe's privileges on obj with what g grants.
func (c *privChecker) check(kind, obj string, g grant, got map[string]string) {
	c.t.Helper()
	for _, p := range c.probes {
		if want := letters(p.want(g)); got[p.role] != want {
			c.t.Errorf("%s %s: %s has %q, the design grants %q", kind, obj, p.role, got[p.role], want)
		}
	}
}

func (c *privChecker) schemas() {
	got := c.privileges(`SELECT n.nspname, r.rolname,
		       concat(CASE WHEN has_schema_privilege(r.oid, n.oid, 'USAGE') THEN 'U' END,
		              CASE WHEN has_schema_privilege(r.oid, n.oid, 'CREATE') THEN 'C' END)
		  FROM pg_namespace n CROSS JOIN pg_roles r
		 WHERE r.rolname = ANY ($1) AND n.nspname !~ '^pg_(toast|temp_|toast_temp_)'`, c.roles)
	c.creatable = map[string]bool{}
	for name, privs := range got {
		for _, p := range privs {
			if strings.Contains(p, "C") {
				c.creatable[name] = true
			}
		}
		g, ok := designSchemas[name]
		if !ok {
			c.t.Errorf("schema %s is not in the design", name)
		}
		c.check("schema", name, g, privs)
	}
}

func (c *privChecker) database() {
	got := c.privileges(`SELECT current_database(), r.rolname,
		       concat(CASE WHEN has_database_privilege(r.oid, current_database(), 'CONNECT') THEN 'c' END,
		              CASE WHEN has_database_privilege(r.oid, current_database(), 'CREATE') THEN 'C' END,
		              CASE WHEN has_database_privilege(r.oid, current_database(), 'TEMPORARY') THEN 'T' END)
		  FROM pg_roles r WHERE r.rolname = ANY ($1)`, c.roles)
	for name, privs := range got {
		c.check("database", name, designDatabase, privs)
	}
}

func (c *privChecker) relations(pg17 bool) {
	maintain := "''"
	if pg17 {
		maintain = "CASE WHEN has_table_privilege(r.oid, c.oid, 'MAINTAIN') THEN 'm' END"
	}
	got := c.privileges(fmt.Sprintf(`SELECT n.nspname || '.' || c.relname, r.rolname,
		       CASE WHEN c.relkind = 'S' THEN
		            concat(CASE WHEN has_sequence_privilege(r.oid, c.oid, 'SELECT') THEN 'r' END,
		                   CASE WHEN has_sequence_privilege(r.oid, c.oid, 'UPDATE') THEN 'w' END,
		                   CASE WHEN has_sequence_privilege(r.oid, c.oid, 'USAGE') THEN 'U' END)
		       ELSE concat(CASE WHEN has_table_privilege(r.oid, c.oid, 'SELECT') THEN 'r' END,
		                   CASE WHEN has_table_privilege(r.oid, c.oid, 'INSERT') THEN 'a' END,
		                   CASE WHEN has_table_privilege(r.oid, c.oid, 'UPDATE') THEN 'w' END,
		                   CASE WHEN has_table_privilege(r.oid, c.oid, 'DELETE') THEN 'd' END,
		                   CASE WHEN has_table_privilege(r.oid, c.oid, 'TRUNCATE') THEN 'D' END,
		                   CASE WHEN has_table_privilege(r.oid, c.oid, 'REFERENCES') THEN 'x' END,
		                   CASE WHEN has_table_privilege(r.oid, c.oid, 'TRIGGER') THEN 't' END,
		                   %s) END
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace CROSS JOIN pg_roles r
		 WHERE r.rolname = ANY ($1) AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND c.oid >= 16384`,
		maintain), c.roles)

	type relInfo struct {
		kind           string
		rls, invoker   bool
		owner          string
		ownerSuperuser bool
	}
	info := map[string]relInfo{}
	rows, err := c.conn.Query(c.ctx, `SELECT n.nspname || '.' || c.relname, c.relkind::text, c.relrowsecurity,
		       coalesce((SELECT option_value::boolean FROM pg_options_to_table(c.reloptions) WHERE option_name = 'security_invoker'), false),
		       pg_get_userbyid(c.relowner), (SELECT rolsuper FROM pg_roles WHERE oid = c.relowner)
		  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		 WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f') AND c.oid >= 16384`)
	if err != nil {
		c.t.Fatal(err)
	}
	var name string
	var ri relInfo
	if _, err := pgx.ForEachRow(rows, []any{&name, &ri.kind, &ri.rls, &ri.invoker, &ri.owner, &ri.ownerSuperuser}, func() error {
		info[name] = ri
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	domains := c.sequenceDomains()

	names := make([]string, 0, len(info))
	for n := range info {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		ri := info[name]
		if !ri.ownerSuperuser {
			c.t.Errorf("relation %s is owned by %s, not a superuser: it may change its grants", name, ri.owner)
		}
		schema, rel, _ := strings.Cut(name, ".")
		switch {
		case schema == "lakesoul_pg":
			if ri.kind != "v" || !ri.invoker {
				c.t.Errorf("relation %s of the pg_catalog emulation is not a view reading as its invoker (kind %s)", name, ri.kind)
			}
			c.check("relation", name, emulationView, got[name])
		case schema == "lakesoul_seq":
			// A lake namespace's sequence: granted to its workspace, or to
			// everyone in the public domain.
			domain, ok := domains[rel]
			if ri.kind != "S" || !ok {
				c.t.Errorf("%s is not the object of a registered sequence (kind %s)", name, ri.kind)
				continue
			}
			for _, p := range c.probes {
				want := ""
				if domain == "public" || domain == "lake-public" || p.inDomain {
					want = "rwU"
				}
				if got[name][p.role] != letters(want) {
					c.t.Errorf("sequence %s of domain %s: %s has %q, want %q", name, domain, p.role, got[name][p.role], letters(want))
				}
			}
		default:
			g, ok := designRelations[name]
			if !ok {
				c.t.Errorf("relation %s is not in the design", name)
			}
			c.check("relation", name, g, got[name])
			reachable := false
			for _, privs := range got[name] {
				reachable = reachable || privs != ""
			}
			switch {
			case ri.kind == "v" && !ri.invoker && !g.definer:
				c.t.Errorf("view %s reads as its owner (security_invoker is off) and is not in the design as such", name)
			case ri.kind == "v" && ri.invoker && g.definer:
				c.t.Errorf("view %s is in the design as reading as its owner but reads as its invoker", name)
			case (ri.kind == "r" || ri.kind == "p") && reachable && !ri.rls && !g.noRLS:
				c.t.Errorf("table %s is reachable by workspace roles without row-level security", name)
			case (ri.kind == "r" || ri.kind == "p") && g.noRLS && ri.rls:
				c.t.Errorf("table %s is in the design as having no row-level security but has it", name)
			}
		}
	}
	for name := range designRelations {
		if _, ok := info[name]; !ok {
			c.t.Errorf("relation %s of the design does not exist", name)
		}
	}
}

// sequenceDomains maps the object names of lakesoul_seq ("s<id>") to the
// domain of their registry rows.
func (c *privChecker) sequenceDomains() map[string]string {
	rows, err := c.conn.Query(c.ctx, "SELECT 's' || id, domain FROM lakesoul.sequence")
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	var obj, domain string
	if _, err := pgx.ForEachRow(rows, []any{&obj, &domain}, func() error {
		out[obj] = domain
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	if len(out) < 2 {
		c.t.Fatalf("the test's sequences are not registered: %v", out)
	}
	return out
}

// designColumns is every column with privileges of its own; a column's
// privileges are its relation's and these.
var designColumns = map[string]grant{
	// ALTER SEQUENCE … OWNED BY, as the caller (migration 21).
	"lakesoul.sequence.owner_table": workspace("w"),
	"lakesoul.sequence.namespace":   workspace("w"), // ALTER SCHEMA … RENAME (migration 29)
}

// columns checks the columns that have privileges of their own.
func (c *privChecker) columns() {
	got := c.privileges(`SELECT n.nspname || '.' || k.relname || '.' || a.attname, r.rolname,
		       concat(CASE WHEN has_column_privilege(r.oid, k.oid, a.attnum, 'SELECT') THEN 'r' END,
		              CASE WHEN has_column_privilege(r.oid, k.oid, a.attnum, 'INSERT') THEN 'a' END,
		              CASE WHEN has_column_privilege(r.oid, k.oid, a.attnum, 'UPDATE') THEN 'w' END,
		              CASE WHEN has_column_privilege(r.oid, k.oid, a.attnum, 'REFERENCES') THEN 'x' END)
		  FROM pg_attribute a JOIN pg_class k ON k.oid = a.attrelid JOIN pg_namespace n ON n.oid = k.relnamespace
		       CROSS JOIN pg_roles r
		 WHERE r.rolname = ANY ($1) AND k.oid >= 16384 AND a.attacl IS NOT NULL`, c.roles)
	for col, privs := range got {
		g, ok := designColumns[col]
		if !ok {
			c.t.Errorf("column %s has privileges of its own and is not in the design", col)
			continue
		}
		rel := designRelations[col[:strings.LastIndex(col, ".")]]
		keep := func(s string) string { // the privileges a column can have
			return strings.Map(func(r rune) rune {
				if strings.ContainsRune("rawx", r) {
					return r
				}
				return -1
			}, s)
		}
		c.check("column", col, grant{public: keep(rel.public + g.public), user: keep(rel.user + g.user),
			admin: keep(rel.admin + g.admin), super: keep(rel.super + g.super)}, privs)
	}
	for col := range designColumns {
		if got[col] == nil {
			c.t.Errorf("column %s of the design has no privileges of its own", col)
		}
	}
}

func (c *privChecker) functions() {
	got := c.privileges(`SELECT p.oid::regprocedure::text, r.rolname,
		       CASE WHEN has_function_privilege(r.oid, p.oid, 'EXECUTE') THEN 'X' ELSE '' END
		  FROM pg_proc p CROSS JOIN pg_roles r
		 WHERE r.rolname = ANY ($1) AND p.oid >= 16384`, c.roles)
	type fnInfo struct {
		schema, name string
		definer      bool
		config       []string
		owner        string
		super        bool
	}
	info := map[string]fnInfo{}
	rows, err := c.conn.Query(c.ctx, `SELECT p.oid::regprocedure::text, n.nspname, p.proname, p.prosecdef,
		       coalesce(p.proconfig, '{}'), pg_get_userbyid(p.proowner), (SELECT rolsuper FROM pg_roles WHERE oid = p.proowner)
		  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.oid >= 16384`)
	if err != nil {
		c.t.Fatal(err)
	}
	var sig string
	var fi fnInfo
	if _, err := pgx.ForEachRow(rows, []any{&sig, &fi.schema, &fi.name, &fi.definer, &fi.config, &fi.owner, &fi.super}, func() error {
		info[sig] = fi
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	workspaceFn := map[string]bool{}
	for _, f := range workspaceFunctions {
		workspaceFn[f] = true
	}
	definers := map[string]bool{}
	for _, f := range securityDefiners {
		definers[f] = true
	}
	seen := map[string]bool{}
	sigs := make([]string, 0, len(info))
	for s := range info {
		sigs = append(sigs, s)
	}
	sort.Strings(sigs)
	for _, sig := range sigs {
		fi := info[sig]
		qualified := fi.schema + "." + fi.name
		seen[fi.name] = true
		if !fi.super {
			c.t.Errorf("function %s is owned by %s, not a superuser", sig, fi.owner)
		}
		var g grant
		switch {
		case fi.schema == "lakesoul_pg":
			g = emulationFunc
			if fi.definer {
				c.t.Errorf("function %s of the pg_catalog emulation is SECURITY DEFINER", sig)
			}
		case fi.schema == "lakesoul" && workspaceFn[fi.name]:
			g = workspace("X")
		case fi.schema == "lakesoul":
			g = designFunctions[fi.name] // absent: the owner's alone
		}
		c.check("function", sig, g, got[sig])
		switch {
		case fi.definer && !definers[qualified]:
			c.t.Errorf("function %s is SECURITY DEFINER and not in the design as such", sig)
		case !fi.definer && definers[qualified]:
			c.t.Errorf("function %s is in the design as SECURITY DEFINER but is not", sig)
		case fi.definer:
			c.checkSearchPath(sig, fi.config)
		}
	}
	for _, f := range append(slices.Clone(workspaceFunctions), "domain_visible", "domain_admin") {
		if !seen[f] {
			c.t.Errorf("function lakesoul.%s of the design does not exist", f)
		}
	}
}

// checkSearchPath: a SECURITY DEFINER function pins its search_path to
// schemas no workspace role creates objects in, with pg_temp last (else the
// caller's temporary relations come first).
func (c *privChecker) checkSearchPath(sig string, config []string) {
	c.t.Helper()
	var path string
	for _, s := range config {
		if v, ok := strings.CutPrefix(s, "search_path="); ok {
			path = v
		}
	}
	if path == "" {
		c.t.Errorf("SECURITY DEFINER function %s does not set its search_path", sig)
		return
	}
	var schemas []string
	for _, s := range strings.Split(path, ",") {
		schemas = append(schemas, strings.Trim(strings.TrimSpace(s), `"`))
	}
	if schemas[len(schemas)-1] != "pg_temp" {
		c.t.Errorf("SECURITY DEFINER function %s: search_path %q does not end with pg_temp", sig, path)
	}
	for _, s := range schemas[:len(schemas)-1] {
		if _, ok := designSchemas[s]; !ok || c.creatable[s] || s == "pg_temp" || strings.HasPrefix(s, "$") {
			c.t.Errorf("SECURITY DEFINER function %s: search_path %q names %s, a schema others may create in or not the catalog's", sig, path, s)
		}
	}
}

func (c *privChecker) types() {
	got := c.privileges(`SELECT t.oid::regtype::text, r.rolname,
		       CASE WHEN has_type_privilege(r.oid, t.oid, 'USAGE') THEN 'U' ELSE '' END
		  FROM pg_type t LEFT JOIN pg_class k ON k.oid = t.typrelid CROSS JOIN pg_roles r
		 WHERE r.rolname = ANY ($1) AND t.oid >= 16384
		   AND (t.typrelid = 0 OR k.relkind = 'c') AND NOT (t.typelem <> 0 AND t.typlen = -1)`, c.roles)
	for name, privs := range got {
		g, ok := designTypes[name]
		if !ok {
			// regtype text is unqualified for types on the search_path.
			g, ok = designTypes["public."+name]
		}
		if !ok {
			c.t.Errorf("type %s is not in the design", name)
		}
		c.check("type", name, g, privs)
	}
	if len(got) != len(designTypes) {
		c.t.Errorf("types: %d in the catalog, %d in the design", len(got), len(designTypes))
	}
}

// builtinACLs lists the privileges of PostgreSQL's own objects (those
// initdb made) by object.
const builtinACLs = `
	SELECT 'relation ' || c.oid::regclass::text, coalesce(c.relacl::text, '') FROM pg_class c WHERE c.oid < 16384
	UNION ALL
	SELECT 'column ' || a.attrelid::regclass::text || '.' || a.attname, coalesce(a.attacl::text, '')
	  FROM pg_attribute a WHERE a.attrelid < 16384 AND a.attnum > 0
	UNION ALL
	SELECT 'function ' || p.oid::regprocedure::text, coalesce(p.proacl::text, '') FROM pg_proc p WHERE p.oid < 16384
	UNION ALL
	SELECT 'type ' || t.oid::regtype::text, coalesce(t.typacl::text, '') FROM pg_type t WHERE t.oid < 16384
	UNION ALL
	SELECT 'language ' || l.lanname, coalesce(l.lanacl::text, '') FROM pg_language l`

func (c *privChecker) aclsOf(conn *pgx.Conn) map[string]string {
	c.t.Helper()
	rows, err := conn.Query(c.ctx, builtinACLs)
	if err != nil {
		c.t.Fatal(err)
	}
	out := map[string]string{}
	var obj, acl string
	if _, err := pgx.ForEachRow(rows, []any{&obj, &acl}, func() error {
		out[obj] = acl
		return nil
	}); err != nil {
		c.t.Fatal(err)
	}
	return out
}

// builtins: PostgreSQL's own objects keep the privileges they have in a
// database the catalog was never migrated into (baseline), but for the
// advisory-lock functions the commit protocol reserves.
func (c *privChecker) builtins(baseline *pgx.Conn) {
	before, after := c.aclsOf(baseline), c.aclsOf(c.conn)
	var changed []string
	for obj, acl := range after {
		if b, ok := before[obj]; !ok || b != acl {
			changed = append(changed, obj)
		}
	}
	if len(before) != len(after) {
		c.t.Errorf("PostgreSQL's own objects: %d in the catalog, %d in a fresh database", len(after), len(before))
	}
	var want []string
	for _, f := range modifiedBuiltins {
		want = append(want, "function "+f)
	}
	sort.Strings(changed)
	sort.Strings(want)
	if !slices.Equal(changed, want) {
		c.t.Errorf("PostgreSQL's own objects whose privileges changed:\n%s\nthe design changes:\n%s",
			strings.Join(changed, "\n"), strings.Join(want, "\n"))
	}
	got := c.privileges(`SELECT p.oid::regprocedure::text, r.rolname,
		       CASE WHEN has_function_privilege(r.oid, p.oid, 'EXECUTE') THEN 'X' ELSE '' END
		  FROM pg_proc p CROSS JOIN pg_roles r
		 WHERE r.rolname = ANY ($1) AND p.oid IN (SELECT f::regprocedure FROM unnest($2::text[]) f)`, c.roles, modifiedBuiltins)
	for _, f := range modifiedBuiltins {
		c.check("function", f, grant{}, got[f])
	}
}

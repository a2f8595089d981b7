package tests

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/lakesoul-go/lakesoul/pgcluster"
)

// What ORMs and PostgreSQL's tools do first (issue 35, items 1, 2, 3, 4, 6
// and 11), each against lakesoul serve with the real client: Sequelize's
// connection settings, sync twice and upsert; TypeORM's synchronize at two
// starts; Kysely's introspection; node-postgres's untyped parameters in
// expressions with ActiveRecord's IntervalStyle; psycopg 3's EnumInfo;
// gorm's Expr("age + ?"); pgbench -M prepared and -M extended.

// TestORMNodeClients installs Sequelize 6, TypeORM 0.3, Kysely 0.27,
// drizzle-orm 0.36 and node-postgres 8 once and runs each one's workflow (testdata/clients/orm_*.js).
func TestORMNodeClients(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	node, env := nodePackages(t, srv, "pg@8", "sequelize@6", "typeorm@0.3", "reflect-metadata@0.2", "kysely@0.27", "drizzle-orm@0.36")
	ctx := testCtx(t)
	t.Run("Sequelize", func(t *testing.T) {
		got := runClient(t, ctx, env, node, testdataPath(t, "orm_sequelize.js"))
		expectLines(t, got,
			"CONNECTED <+00>-00", // SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE at connect
			"SYNCED",
			"CREATED 1",
			`ROWS [{"id":1,"name":"ann2","age":33},{"id":2,"name":"bob","age":5}]`,
			"DESCRIBE age,createdAt,id,name,updatedAt true undefined false",
			"SHOW_ALL_TABLES true",
			"FIND_OR_CREATE true false true 4",
			"DONE")
	})
	t.Run("TypeORM", func(t *testing.T) {
		got := runClient(t, ctx, env, node, testdataPath(t, "orm_typeorm.js"))
		expectLines(t, got,
			"START 1 PENDING 1",
			`ROW {"id":1,"code":"c1","qty":6}`,
			"START 2 PENDING 0", // the second start finds its tables as it made them
			`ROW {"id":3,"code":"c2","qty":7}`,
			"DONE")
	})
	t.Run("Kysely", func(t *testing.T) {
		got := runClient(t, ctx, env, node, testdataPath(t, "orm_kysely.js"), "orm_ky")
		expectLines(t, got,
			"SCHEMAS orm_ky,public",
			"TABLE orm_ky person id:int4:true:false,name:text:false:false,age:int4:false:true",
			"TABLE orm_ky pet id:int8:false:false,owner:int4:false:true",
			"TABLE public person_orm_ky id:int8:true:false",
			"DONE")
	})
	t.Run("Drizzle", func(t *testing.T) {
		got := runClient(t, ctx, env, node, testdataPath(t, "orm_drizzle.js"), "orm_dz")
		expectLines(t, got,
			"MIGRATED 1 2",
			"MIGRATED 2 2", // the second start finds both applied
			"INSERTED 1 x",
			`ROWS [{"name":"ann2","age":32,"city":"x"},{"name":"bob","age":5,"city":"x"},{"name":"dee","age":9,"city":"y"}]`,
			"COLUMNS id:integer:NO:nextval('orm_dz.users_id_seq'::regclass),name:text:NO:null,age:integer:YES:null,city:text:NO:'x'::text",
			"DONE")
	})
	t.Run("NodePostgresUntyped", func(t *testing.T) {
		got := runClient(t, ctx, env, node, testdataPath(t, "orm_pg_untyped.js"), "orm_pgu")
		expectLines(t, got,
			"UPDATE_EXPR 1",
			"UPDATE_COALESCE 1",
			`SELECT_EXPR [["1",6,16,2],["2",6,8,3]]`,
			`ROWS [["1",15,"1.50"],["2",7,"1.75"]]`,
			`ISO_8601 [["P1DT2H3M4S","P-1Y-2M"]]`,
			"TIMEZONE <+05:30>-05:30",
			"DONE")
	})
}

// TestPsycopgEnumInfo: psycopg 3 (Debian's python3-psycopg) finds lake enum
// types with EnumInfo.fetch, whose query casts the name parameter to
// regtype, and adapts their values.
func TestPsycopgEnumInfo(t *testing.T) {
	t.Parallel()
	python := requireClient(t, "python3", "/usr/bin/python3")
	if err := exec.Command(python, "-c", "import psycopg").Run(); err != nil {
		requireClient(t, "psycopg 3 (apt-get install python3-psycopg)", "/nonexistent/psycopg")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	env := []string{"PGHOST=127.0.0.1", "PGPORT=" + strconv.Itoa(srv.port), "PGUSER=" + adminRole,
		"PGPASSWORD=" + pw, "PGDATABASE=" + database}
	got := runClient(t, testCtx(t), env, python, testdataPath(t, "psycopg_enum.py"), "orm_psy")
	expectLines(t, got,
		"ENUMINFO mood sad,ok,happy True True",
		"UNQUALIFIED ['sad', 'ok', 'happy']",
		"MISSING None",
		"ROWS [(2, <Mood.sad: 1>), (1, <Mood.happy: 3>)]",
		"DONE")
}

// gormUser is gorm's model of orm_gorm_users.
type gormUser struct {
	ID   int64 `gorm:"primaryKey"`
	Name string
	Age  int
}

func (gormUser) TableName() string { return "orm_gorm.users" }

// TestGormExpr: gorm (pgx underneath, statements prepared without parameter
// types) creates a table, inserts, and updates with Expr("age + ?"), whose
// parameter only its operand types.
func TestGormExpr(t *testing.T) {
	t.Parallel()
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	dsn := fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=%s sslmode=disable", srv.port, adminRole, pw, database)
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	ctx := testCtx(t)
	db = db.WithContext(ctx)
	for _, q := range []string{"CREATE SCHEMA orm_gorm", "CREATE TABLE orm_gorm.users (id bigint PRIMARY KEY, name text, age int)"} {
		if err := db.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Create(&[]gormUser{{ID: 1, Name: "ann", Age: 30}, {ID: 2, Name: "bob", Age: 40}}).Error; err != nil {
		t.Fatal(err)
	}
	res := db.Model(&gormUser{}).Where("id = ?", 1).Update("age", gorm.Expr("age + ?", 5))
	if res.Error != nil || res.RowsAffected != 1 {
		t.Fatalf("Update(age, Expr(age + ?)): %v, %d rows", res.Error, res.RowsAffected)
	}
	if err := db.Model(&gormUser{}).Where("age > ?", 30).Updates(map[string]any{"age": gorm.Expr("age * ? - ?", 2, 1)}).Error; err != nil {
		t.Fatal(err)
	}
	var users []gormUser
	if err := db.Order("id").Find(&users).Error; err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(users); got != "[{1 ann 69} {2 bob 79}]" {
		t.Errorf("rows: %s", got)
	}
}

// TestPgbenchPrepared runs pgbench's built-in TPC-B script with its
// statements prepared (-M prepared) and in the extended protocol (-M
// extended): "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE
// aid = $2" and the rest, untyped. Every transaction completes and the
// history accounts for every balance (one client: concurrent read-modify-
// write is another matter).
func TestPgbenchPrepared(t *testing.T) {
	t.Parallel()
	requirePG(t)
	bin, err := pgcluster.FindBinDir("")
	if err != nil {
		t.Fatal(err)
	}
	pgbench := requireClient(t, "pgbench", bin+"/pgbench", "pgbench")
	// A server of its own: pgbench names its tables without a schema.
	srv := startServerT(t, filepath.Join(testBaseDir(t), "data"), "pgbench-Secret!")
	defer func() {
		if err := srv.stop(); err != nil {
			t.Error(err)
		}
	}()
	ctx := testCtx(t)
	c := srv.connect(t)
	// pgbench -i's tables, as it creates them (its own -i needs ALTER TABLE
	// … ADD PRIMARY KEY over rows).
	mustExec(t, ctx, c,
		"CREATE TABLE pgbench_branches (bid int PRIMARY KEY, bbalance int, filler char(88))",
		"CREATE TABLE pgbench_tellers (tid int PRIMARY KEY, bid int, tbalance int, filler char(84))",
		"CREATE TABLE pgbench_accounts (aid int PRIMARY KEY, bid int, abalance int, filler char(84))",
		"CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22))",
		"INSERT INTO pgbench_branches VALUES (1, 0, '')",
		"INSERT INTO pgbench_tellers SELECT i, 1, 0, '' FROM generate_series(1, 10) i",
		"INSERT INTO pgbench_accounts SELECT i, 1, 0, '' FROM generate_series(1, 100000) i") // scale 1
	pw, _ := srv.adminPassword()
	for _, mode := range []string{"prepared", "extended"} {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		cmd := exec.CommandContext(rctx, pgbench, "-h", "127.0.0.1", "-p", strconv.Itoa(srv.port), "-U", adminRole,
			"-n", "-M", mode, "-c", "1", "-t", "20", database)
		cmd.Env = append(cmd.Environ(), "PGPASSWORD="+pw)
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil || !strings.Contains(string(out), "number of transactions actually processed: 20/20") {
			t.Fatalf("pgbench -M %s: %v\n%s", mode, err, out)
		}
	}
	got := queryStrings(t, ctx, c, `SELECT (SELECT count(*) FROM pgbench_history)::text,
		((SELECT sum(delta) FROM pgbench_history) = (SELECT sum(abalance) FROM pgbench_accounts))::text,
		((SELECT sum(delta) FROM pgbench_history) = (SELECT sum(tbalance) FROM pgbench_tellers))::text`)
	wantRows(t, "pgbench history and balances", got, []string{"40|true|true"})
}

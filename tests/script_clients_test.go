package tests

import (
	"os/exec"
	"strconv"
	"testing"
)

// Clients of scripting languages from Debian, each doing what an
// application of its language does first (issue 35): schema twice, CRUD
// with placeholders, last_insert_id, an upsert, transactions, reflection.

// TestDBDPg runs testdata/clients/dbdpg_client.pl with Perl's DBI and
// DBD::Pg (libdbd-pg-perl).
func TestDBDPg(t *testing.T) {
	t.Parallel()
	perl := requireClient(t, "perl", "/usr/bin/perl")
	if err := exec.Command(perl, "-MDBD::Pg", "-e", "1").Run(); err != nil {
		requireClient(t, "DBD::Pg (apt-get install libdbd-pg-perl)", "/nonexistent/DBD-Pg")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	dsn := "dbi:Pg:dbname=" + database + ";host=127.0.0.1;port=" + strconv.Itoa(srv.port) + ";sslmode=disable"
	got := runClient(t, testCtx(t), nil, perl, testdataPath(t, "dbdpg_client.pl"), dsn, adminRole, pw, "dbdpg")
	expectLines(t, got,
		"SCHEMA",
		"LAST_INSERT_ID 1 2",
		"UPDATED 1",
		"DELETED 1",
		"ROWS ann2:32,cid:7",
		"TABLES people",
		"COLUMNS id:integer:0,name:text:0,age:integer:1",
		"PRIMARY_KEY id",
		"DONE")
}

// TestRubyPG runs testdata/clients/rubypg_client.rb with ruby-pg.
func TestRubyPG(t *testing.T) {
	t.Parallel()
	ruby := requireClient(t, "ruby", "/usr/bin/ruby")
	if err := exec.Command(ruby, "-rpg", "-e", "1").Run(); err != nil {
		requireClient(t, "ruby-pg (apt-get install ruby-pg)", "/nonexistent/ruby-pg")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	conninfo := "host=127.0.0.1 port=" + strconv.Itoa(srv.port) + " user=" + adminRole + " password=" + pw +
		" dbname=" + database + " sslmode=disable"
	got := runClient(t, testCtx(t), nil, ruby, testdataPath(t, "rubypg_client.rb"), conninfo, "rubypg")
	expectLines(t, got,
		"SCHEMA",
		"RETURNING 1",
		"UPDATED 1",
		"ROWS pencil:10:1.5,ink:1:9.99,cap:2:0.25",
		"COLUMNS id:bigint:nextval('rubypg.items_id_seq'::regclass):true,name:character varying::true,qty:integer::false,price:numeric(10,2)::false",
		"PRIMARY_KEY id",
		"DONE")
}

// TestPHPPgsql runs testdata/clients/phppgsql_client.php with PHP's pgsql
// extension (php-cli, php-pgsql).
func TestPHPPgsql(t *testing.T) {
	t.Parallel()
	php := requireClient(t, "php", "/usr/bin/php")
	if err := exec.Command(php, "-r", "exit(function_exists('pg_connect') ? 0 : 1);").Run(); err != nil {
		requireClient(t, "php-pgsql (apt-get install php-pgsql)", "/nonexistent/php-pgsql")
	}
	srv := sharedServer(t)
	pw, _ := srv.adminPassword()
	conninfo := "host=127.0.0.1 port=" + strconv.Itoa(srv.port) + " user=" + adminRole + " password=" + pw +
		" dbname=" + database + " sslmode=disable"
	got := runClient(t, testCtx(t), nil, php, testdataPath(t, "phppgsql_client.php"), conninfo, "phppg")
	expectLines(t, got,
		"SCHEMA",
		"IDS 1 2",
		"UPDATED 1",
		"ROWS hello2:3,second:5,third:7",
		"META id:int4:nn,title:text:nn,views:int4:null",
		"TABLES posts",
		"DONE")
}

# DBD::Pg (Debian's libdbd-pg-perl) against lakesoul serve, as a Perl
# application does first: its schema created twice (a second start), CRUD
# with ? placeholders (sent as untyped parameters, also in expressions),
# last_insert_id of a serial column, an upsert, a transaction rolled back and
# one committed, and reflection (table_info, column_info, primary_key). One
# line per fact; any error dies. Arguments: the DBI DSN, user, password, a
# schema name of the test's own.
use strict;
use warnings;
use DBI;

my ($dsn, $user, $password, $schema) = @ARGV;
my $dbh = DBI->connect($dsn, $user, $password, { RaiseError => 1, AutoCommit => 1, PrintError => 0 });
$dbh->do("DROP SCHEMA IF EXISTS $schema CASCADE");
for my $start (1, 2) {
    $dbh->do("CREATE SCHEMA IF NOT EXISTS $schema");
    $dbh->do("CREATE TABLE IF NOT EXISTS $schema.people (id serial PRIMARY KEY, name text NOT NULL, age integer)");
}
print "SCHEMA\n";

my $ins = $dbh->prepare("INSERT INTO $schema.people (name, age) VALUES (?, ?)");
$ins->execute('ann', 30);
my $id = $dbh->last_insert_id(undef, $schema, 'people', undef);
$ins->execute('bob', 5);
print "LAST_INSERT_ID $id ", $dbh->last_insert_id(undef, $schema, 'people', undef), "\n";
print "UPDATED ", $dbh->do("UPDATE $schema.people SET age = age + ? WHERE id = ?", undef, 2, $id), "\n";
$dbh->do("INSERT INTO $schema.people (id, name, age) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name",
    undef, $id, 'ann2', 99);
print "DELETED ", $dbh->do("DELETE FROM $schema.people WHERE name = ?", undef, 'bob'), "\n";

$dbh->begin_work;
$ins->execute('tmp', 1);
$dbh->rollback;
$dbh->begin_work;
$ins->execute('cid', 7);
$dbh->commit;
my $rows = $dbh->selectall_arrayref("SELECT name, age FROM $schema.people ORDER BY id");
print "ROWS ", join(',', map { "$_->[0]:$_->[1]" } @$rows), "\n";

my $tables = $dbh->table_info(undef, $schema, '%', 'TABLE')->fetchall_arrayref({});
print "TABLES ", join(',', map { $_->{TABLE_NAME} } @$tables), "\n";
my $cols = $dbh->column_info(undef, $schema, 'people', '%')->fetchall_arrayref({});
print "COLUMNS ", join(',', map { "$_->{COLUMN_NAME}:$_->{TYPE_NAME}:$_->{NULLABLE}" } @$cols), "\n";
print "PRIMARY_KEY ", join(',', $dbh->primary_key(undef, $schema, 'people')), "\n";
$dbh->disconnect;
print "DONE\n";

<?php
// PHP's pgsql extension (Debian's php-pgsql) against lakesoul serve, as a
// PHP application does first: its schema twice, CRUD with pg_query_params
// and a prepared statement (untyped $n, also in expressions), an upsert,
// pg_last_oid-free last ids (RETURNING, currval of the serial's sequence
// by pg_get_serial_sequence, as frameworks' lastInsertId('seq') does), a
// transaction rolled back and one committed, and reflection
// (pg_meta_data, information_schema). One line per fact; any error exits
// non-zero. Arguments: the connection string, a schema name of its own.
function check($r, $c) {
    if ($r === false) {
        fwrite(STDERR, pg_last_error($c) . "\n");
        exit(1);
    }
    return $r;
}
[$_, $conninfo, $schema] = $argv;
$c = pg_connect($conninfo);
if ($c === false) { exit(1); }
check(pg_query($c, "DROP SCHEMA IF EXISTS $schema CASCADE"), $c);
for ($i = 0; $i < 2; $i++) {
    check(pg_query($c, "CREATE SCHEMA IF NOT EXISTS $schema"), $c);
    check(pg_query($c, "CREATE TABLE IF NOT EXISTS $schema.posts (id serial PRIMARY KEY, title text NOT NULL, views integer DEFAULT 0)"), $c);
}
echo "SCHEMA\n";
$r = check(pg_query_params($c, "INSERT INTO $schema.posts (title) VALUES ($1) RETURNING id", ['hello']), $c);
$id = pg_fetch_result($r, 0, 0);
check(pg_prepare($c, 'ins', "INSERT INTO $schema.posts (title, views) VALUES ($1, $2)"), $c);
check(pg_execute($c, 'ins', ['second', 5]), $c);
$seq = pg_fetch_result(check(pg_query_params($c, "SELECT pg_get_serial_sequence($1, $2)", ["$schema.posts", 'id']), $c), 0, 0);
$last = pg_fetch_result(check(pg_query_params($c, "SELECT currval($1)", [$seq]), $c), 0, 0);
echo "IDS $id $last\n";
$r = check(pg_query_params($c, "UPDATE $schema.posts SET views = views + $1 WHERE id = $2", [3, $id]), $c);
echo "UPDATED " . pg_affected_rows($r) . "\n";
check(pg_query_params($c, "INSERT INTO $schema.posts (id, title, views) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET title = EXCLUDED.title", [$id, 'hello2', 0]), $c);
check(pg_query($c, "BEGIN"), $c);
check(pg_execute($c, 'ins', ['tmp', 1]), $c);
check(pg_query($c, "ROLLBACK"), $c);
check(pg_query($c, "BEGIN"), $c);
check(pg_execute($c, 'ins', ['third', 7]), $c);
check(pg_query($c, "COMMIT"), $c);
$rows = pg_fetch_all(check(pg_query($c, "SELECT title, views FROM $schema.posts ORDER BY id"), $c));
echo "ROWS " . implode(',', array_map(fn($r) => $r['title'] . ':' . $r['views'], $rows)) . "\n";
$meta = pg_meta_data($c, "$schema.posts");
echo "META " . implode(',', array_map(fn($k, $m) => "$k:{$m['type']}:" . ($m['not null'] ? 'nn' : 'null'), array_keys($meta), $meta)) . "\n";
$t = pg_fetch_all_columns(check(pg_query_params($c, "SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [$schema]), $c));
echo "TABLES " . implode(',', $t) . "\n";
pg_close($c);
echo "DONE\n";

// node-postgres (pg) against lakesoul serve: simple and parameterised
// queries (extended protocol), types, a transaction, errors with SQLSTATE.
// Prints one line per fact for the Go test; any failure exits non-zero.
// usage: node pg_client.js <schema>   (connection from PG* environment)
const { Client } = require('pg');

(async () => {
  const schema = process.argv[2];
  const t = schema + '.t';
  const c = new Client();
  await c.connect();
  console.log('VERSION', (await c.query('SHOW server_version')).rows[0].server_version);
  await c.query('CREATE SCHEMA ' + schema);
  await c.query('CREATE TABLE ' + t + ' (id int PRIMARY KEY, name text, v double precision, ok boolean, d date)');
  await c.query('BEGIN');
  for (let i = 1; i <= 5; i++) {
    await c.query('INSERT INTO ' + t + ' VALUES ($1, $2, $3, $4, $5)', [i, 'name ' + i, i / 2, i % 2 === 0, '2026-01-0' + i]);
  }
  await c.query('COMMIT');
  const r = await c.query('SELECT id, name, v, ok FROM ' + t + ' WHERE id >= $1 ORDER BY id', [4]);
  console.log('ROWS', JSON.stringify(r.rows));
  console.log('FIELDS', r.fields.map((f) => f.name + ':' + f.dataTypeID + ':' + f.tableID + ':' + f.columnID).join(','));
  const agg = await c.query({ text: 'SELECT count(*)::int AS n, sum(v) AS s FROM ' + t, rowMode: 'array' });
  console.log('AGG', JSON.stringify(agg.rows));
  try {
    await c.query('SELECT nope FROM ' + t);
  } catch (e) {
    console.log('ERROR', e.code);
  }
  await c.query('BEGIN');
  await c.query('INSERT INTO ' + t + ' VALUES (100, $1, 0, true, $2)', ['gone', '2026-01-01']);
  await c.query('ROLLBACK');
  console.log('AFTER_ROLLBACK', (await c.query('SELECT count(*)::int AS n FROM ' + t)).rows[0].n);
  await c.end();
  console.log('DONE');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

// node-postgres (pg) against lakesoul serve: the statement and wire fixes of
// issue 14. node-postgres sends parameters untyped (Parse with no types) and
// binds them as text. Prints one line per fact for the Go test; any failure
// exits non-zero.
// usage: node wire_pg.js <schema>   (connection from PG* environment)
const { Client } = require('pg');

(async () => {
  const s = process.argv[2];
  const c = new Client();
  await c.connect();
  const code = async (q, params) => {
    try {
      await c.query(q, params);
      return 'OK';
    } catch (e) {
      return e.code;
    }
  };
  const rows = async (q, params) => JSON.stringify((await c.query({ text: q, values: params, rowMode: 'array' })).rows);
  await c.query(`CREATE SCHEMA ${s}`);
  await c.query(`CREATE TABLE ${s}.pk (id int PRIMARY KEY, c text, n int NOT NULL)`);
  await c.query(`CREATE TABLE ${s}.ap (id int, c text)`);
  await c.query(`INSERT INTO ${s}.pk VALUES ($1, $2, $3), ($4, $5, $6)`, [1, 'a', 1, 2, 'b', 2]);
  await c.query(`INSERT INTO ${s}.ap VALUES ($1, $2), ($3, $4), ($5, $6)`, [1, 'a', 2, 'b', 3, 'c']);

  // Item 1: UPDATE/DELETE/MERGE with untyped parameters.
  let r = await c.query(`UPDATE ${s}.pk SET c = $1 WHERE id = $2`, ['x', 1]);
  console.log('UPDATE_PK', r.command, r.rowCount);
  r = await c.query(`UPDATE ${s}.pk SET n = $1`, [7]);
  console.log('UPDATE_PK_ALL', r.rowCount);
  r = await c.query(`UPDATE ${s}.ap SET c = $1 WHERE id = $2`, ['x', 1]);
  console.log('UPDATE_AP', r.rowCount);
  r = await c.query(`UPDATE ${s}.ap SET c = $1`, ['y']);
  console.log('UPDATE_AP_ALL', r.rowCount);
  r = await c.query(`DELETE FROM ${s}.ap WHERE id = $1`, [3]);
  console.log('DELETE_AP', r.rowCount);
  r = await c.query(`MERGE INTO ${s}.pk t USING (SELECT $1::int AS id) src ON t.id = src.id
    WHEN MATCHED THEN UPDATE SET c = $2 WHEN NOT MATCHED THEN INSERT (id, c, n) VALUES (src.id, $2, $3)`, [5, 'm', 5]);
  console.log('MERGE', r.command);
  console.log('PK', await rows(`SELECT * FROM ${s}.pk ORDER BY id`));
  console.log('AP', await rows(`SELECT * FROM ${s}.ap ORDER BY id`));

  // Item 5: UPDATE … FROM counts target rows.
  await c.query(`CREATE TABLE ${s}.src (id int, v text)`);
  await c.query(`INSERT INTO ${s}.src VALUES (1, 'f'), (1, 'f'), (1, 'f'), (1, 'f')`);
  r = await c.query(`UPDATE ${s}.pk SET c = src.v FROM ${s}.src WHERE pk.id = src.id`);
  console.log('UPDATE_FROM', r.rowCount);

  // Item 5: transaction characteristics.
  console.log('ISOLATION', (await c.query('SHOW transaction_isolation')).rows[0].transaction_isolation);
  await c.query('BEGIN ISOLATION LEVEL SERIALIZABLE READ ONLY');
  console.log('ISOLATION_BLOCK', (await c.query('SHOW transaction_isolation')).rows[0].transaction_isolation);
  console.log('READ_ONLY_INSERT', await code(`INSERT INTO ${s}.pk VALUES ($1, $2, $3)`, [9, 'r', 9]));
  await c.query('ROLLBACK');
  await c.query(`SET search_path = ${s}, public`);
  const sp = (await c.query('SHOW search_path')).rows[0].search_path;
  const cs = (await c.query("SELECT current_setting('search_path') AS v")).rows[0].v;
  console.log('SEARCH_PATH', sp === cs, sp);

  // Item 9: NOT NULL and SERIAL.
  console.log('PARTIAL_NEW_KEY', await code(`INSERT INTO ${s}.pk (id, c) VALUES ($1, $2)`, [20, 'new']));
  console.log('PARTIAL_OLD_KEY', await code(`INSERT INTO ${s}.pk (id, c) VALUES ($1, $2)`, [2, 'kept n']));
  console.log('SET_NULL', await code(`UPDATE ${s}.pk SET n = $1 WHERE id = $2`, [null, 2]));
  console.log('SERIAL', await code(`CREATE TABLE ${s}.ser (id serial PRIMARY KEY, v text)`));
  console.log('SERIAL_RETURNING', JSON.stringify((await c.query(`INSERT INTO ${s}.ser (v) VALUES ($1), ($2) RETURNING id, v`, ['a', 'b'])).rows));
  console.log('PK2', await rows(`SELECT * FROM ${s}.pk WHERE id = 2`));

  // Item 4: DDL follows the transaction block.
  await c.query('BEGIN');
  await c.query(`DROP TABLE ${s}.ap`);
  await c.query('ROLLBACK');
  console.log('AFTER_DROP_ROLLBACK', await rows(`SELECT count(*)::int FROM ${s}.ap`));
  await c.query('BEGIN');
  await c.query(`CREATE TABLE ${s}.tmp (id int)`);
  await c.query(`INSERT INTO ${s}.tmp VALUES ($1)`, [1]);
  await c.query('ROLLBACK');
  console.log('AFTER_CREATE_ROLLBACK', await code(`SELECT * FROM ${s}.tmp`));

  // Item 10 and bad input: an unsupported statement names what is supported;
  // the connection stays usable.
  try {
    await c.query('CLUSTER x');
  } catch (e) {
    console.log('UNSUPPORTED', e.code, ['UPDATE', 'DELETE', 'MERGE', 'COPY'].every((w) => e.hint.includes(w)));
  }
  console.log('SYNTAX', await code('SELEC 1'));
  console.log('AFTER_ERRORS', await rows('SELECT 1'));
  await c.end();
  console.log('DONE');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

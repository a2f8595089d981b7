// node-postgres sends every parameter untyped: the server infers each from
// its context as PostgreSQL does (age + $1, $1 * 2, COALESCE(age, 0) + $1),
// and untyped literals too (qty + '1'); ActiveRecord's and Sequelize's
// session settings (IntervalStyle iso_8601, SET TIME ZONE INTERVAL).
// usage: node orm_pg_untyped.js <schema>   (connection from PG* environment)
const { Client } = require('pg');

(async () => {
  const s = process.argv[2];
  const c = new Client();
  await c.connect();
  const rows = async (q, params) => JSON.stringify((await c.query({ text: q, values: params, rowMode: 'array' })).rows);
  // The server's text, unparsed (an ActiveRecord reads intervals so).
  const texts = async (q) => JSON.stringify((await c.query({ text: q, rowMode: 'array', types: { getTypeParser: () => (v) => v } })).rows);
  await c.query(`CREATE SCHEMA ${s}`);
  await c.query(`CREATE TABLE ${s}.acc (id bigint PRIMARY KEY, age int, qty int, bal numeric(10,2))`);
  await c.query(`INSERT INTO ${s}.acc VALUES ($1, $2, $3, $4), ($5, $6, $7, $8)`, [1, 10, 1, '1.50', 2, null, 2, '2.00']);
  let r = await c.query(`UPDATE ${s}.acc SET age = age + $1 WHERE id = $2`, [5, 1]);
  console.log('UPDATE_EXPR', r.rowCount);
  r = await c.query(`UPDATE ${s}.acc SET age = COALESCE(age, 0) + $1, bal = bal - $2 WHERE id = $3`, [7, '0.25', 2]);
  console.log('UPDATE_COALESCE', r.rowCount);
  console.log('SELECT_EXPR', await rows(`SELECT id, $1 * 2, age + $2, qty + '1' FROM ${s}.acc WHERE id >= $3 ORDER BY id`, [3, 1, 1]));
  console.log('ROWS', await rows(`SELECT id, age, bal FROM ${s}.acc ORDER BY id`));
  await c.query(`SET intervalstyle = iso_8601`);
  console.log('ISO_8601', await texts(`SELECT INTERVAL '1 day 02:03:04', INTERVAL '-1 year -2 mons'`));
  await c.query(`SET intervalstyle = postgres`);
  await c.query(`SET client_min_messages TO warning;SET TIME ZONE INTERVAL '+05:30' HOUR TO MINUTE;`);
  console.log('TIMEZONE', (await c.query('SHOW TimeZone')).rows[0].TimeZone);
  await c.end();
  console.log('DONE');
})().catch((e) => { console.error(e); process.exit(1); });

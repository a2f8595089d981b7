// Kysely 0.27's introspection (getSchemas, getTables: pg_catalog with
// pg_get_serial_sequence for auto-increment columns) of schema <schema>.
// usage: node orm_kysely.js <schema>   (connection from PG* environment)
const { Kysely, PostgresDialect } = require('kysely');
const { Pool } = require('pg');

(async () => {
  const s = process.argv[2];
  const pool = new Pool();
  await pool.query(`CREATE SCHEMA ${s}`);
  await pool.query(`CREATE TABLE ${s}.person (id serial PRIMARY KEY, name text NOT NULL, age int)`);
  await pool.query(`CREATE TABLE ${s}.pet (id bigint PRIMARY KEY, owner int)`);
  await pool.query(`CREATE TABLE person_${s} (id bigserial PRIMARY KEY)`);
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  console.log('SCHEMAS', (await db.introspection.getSchemas()).map((x) => x.name).filter((n) => n === s || n === 'public').sort().join(','));
  for (const t of await db.introspection.getTables()) {
    if (t.schema !== s && t.name !== `person_${s}`) continue;
    console.log('TABLE', t.schema, t.name, t.columns.map((c) => `${c.name}:${c.dataType}:${c.isAutoIncrementing}:${c.isNullable}`).join(','));
  }
  await db.destroy();
  console.log('DONE');
})().catch((e) => { console.error(e); process.exit(1); });

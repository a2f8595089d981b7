// drizzle-orm 0.36 (node-postgres) against lakesoul serve, as an
// application uses it first: its migrator at two starts (schema "drizzle",
// its __drizzle_migrations table with a SERIAL key, each migration in a
// transaction, statements split at its breakpoints), inserts with
// RETURNING, an update by an expression, onConflictDoUpdate, a transaction
// rolled back and one committed, and the columns drizzle-kit would
// introspect. One line per fact; a failure exits non-zero. Connection from
// the PG* environment; argv[2] is a schema name of the test's own.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { Pool } = require('pg');
const { drizzle } = require('drizzle-orm/node-postgres');
const { migrate } = require('drizzle-orm/node-postgres/migrator');
const { pgSchema, serial, text, integer } = require('drizzle-orm/pg-core');
const { eq, sql, asc } = require('drizzle-orm');

const schema = process.argv[2];
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drizzle-'));
fs.mkdirSync(path.join(dir, 'meta'));
const migrations = [
  ['0000_init', `CREATE SCHEMA IF NOT EXISTS "${schema}";\n--> statement-breakpoint\n` +
    `CREATE TABLE "${schema}"."users" ("id" serial PRIMARY KEY NOT NULL, "name" text NOT NULL, "age" integer);\n--> statement-breakpoint\n` +
    `CREATE INDEX "users_name_idx" ON "${schema}"."users" ("name");`],
  ['0001_city', `ALTER TABLE "${schema}"."users" ADD COLUMN "city" text DEFAULT 'x' NOT NULL;`],
];
fs.writeFileSync(path.join(dir, 'meta', '_journal.json'), JSON.stringify({
  version: '7', dialect: 'postgresql',
  entries: migrations.map(([tag], idx) => ({ idx, version: '7', when: 1700000000000 + idx, tag, breakpoints: true })),
}));
for (const [tag, body] of migrations) fs.writeFileSync(path.join(dir, `${tag}.sql`), body);

const s = pgSchema(schema);
const users = s.table('users', { id: serial('id').primaryKey(), name: text('name').notNull(), age: integer('age'), city: text('city').notNull() });

(async () => {
  for (const start of [1, 2]) {
    const pool = new Pool();
    await migrate(drizzle(pool), { migrationsFolder: dir });
    const n = await pool.query('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations');
    console.log('MIGRATED', start, n.rows[0].n);
    await pool.end();
  }
  const pool = new Pool();
  const db = drizzle(pool);
  const [a] = await db.insert(users).values({ name: 'ann', age: 30 }).returning();
  await db.insert(users).values([{ name: 'bob', age: 5 }, { name: 'cid' }]);
  console.log('INSERTED', a.id, a.city);
  await db.update(users).set({ age: sql`${users.age} + ${2}` }).where(eq(users.id, a.id));
  await db.insert(users).values({ id: a.id, name: 'ann2', age: 0 })
    .onConflictDoUpdate({ target: users.id, set: { name: sql`excluded.name` } });
  await db.delete(users).where(eq(users.name, 'cid'));
  try {
    await db.transaction(async (tx) => { await tx.insert(users).values({ name: 'tmp' }); tx.rollback(); });
  } catch (e) { /* drizzle's rollback throws */ }
  await db.transaction(async (tx) => { await tx.insert(users).values({ name: 'dee', age: 9, city: 'y' }); });
  const rows = await db.select({ name: users.name, age: users.age, city: users.city }).from(users).orderBy(asc(users.id));
  console.log('ROWS', JSON.stringify(rows));
  const cols = await pool.query(`SELECT column_name, data_type, is_nullable, column_default FROM information_schema.columns
    WHERE table_schema = $1 AND table_name = 'users' ORDER BY ordinal_position`, [schema]);
  console.log('COLUMNS', cols.rows.map((c) => `${c.column_name}:${c.data_type}:${c.is_nullable}:${c.column_default}`).join(','));
  await pool.end();
  console.log('DONE');
})().catch((e) => { console.error(e); process.exit(1); });

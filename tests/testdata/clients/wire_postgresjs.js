// postgres.js (npm "postgres") against lakesoul serve. postgres.js prepares
// every parameterised query as a named statement with Parse/Describe/Flush
// and waits for the answer before it sends Bind/Execute/Sync: an error it
// did not get before a Sync hung it forever (issue 14, item 2).
// usage: node wire_postgresjs.js <schema>   (connection from PG* environment)
const postgres = require('postgres');

(async () => {
  const s = process.argv[2];
  const sql = postgres({ max: 1, onnotice: () => {} });
  const code = async (fn) => {
    try {
      await fn();
      return 'OK';
    } catch (e) {
      return e.code;
    }
  };
  await sql.unsafe(`CREATE SCHEMA ${s}`);
  await sql.unsafe(`CREATE TABLE ${s}.t (id int PRIMARY KEY, c text)`);
  await sql.unsafe(`INSERT INTO ${s}.t VALUES ($1, $2)`, [1, 'a']);
  // Errors of parameterised queries reach the client and the connection
  // goes on: a missing column (Parse), a missing table, a bad value (Bind).
  console.log('ERR_COLUMN', await code(() => sql.unsafe(`SELECT nope FROM ${s}.t WHERE id = $1`, [1])));
  console.log('ERR_TABLE', await code(() => sql.unsafe(`SELECT * FROM ${s}.missing WHERE id = $1`, [1])));
  console.log('ERR_VALUE', await code(() => sql.unsafe(`SELECT * FROM ${s}.t WHERE id = $1`, ['x'])));
  console.log('ERR_SYNTAX', await code(() => sql.unsafe('SELEC $1', [1])));
  const rows = await sql.unsafe(`SELECT id, c FROM ${s}.t WHERE id = $1`, [1]);
  console.log('AFTER', JSON.stringify(rows));
  // Item 1: UPDATE with parameters.
  const u = await sql.unsafe(`UPDATE ${s}.t SET c = $1 WHERE id = $2`, ['b', 1]);
  console.log('UPDATE', u.command, u.count);
  console.log('ROW', JSON.stringify(await sql.unsafe(`SELECT c FROM ${s}.t`)));
  await sql.end();
  console.log('DONE');
})().catch((e) => {
  console.error(e);
  process.exit(1);
});

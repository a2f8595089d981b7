// TypeORM 0.3 against lakesoul serve: synchronize() at every start, so a
// second start compares the tables it made with its entities (column
// defaults, generated keys, indexes) and must find nothing to change; then
// save, upsert and increment. One line per fact; a failure exits non-zero.
require('reflect-metadata');
const { DataSource, EntitySchema } = require('typeorm');

const Item = new EntitySchema({
  name: 'Item', tableName: 'orm_typeorm_items',
  columns: {
    id: { type: Number, primary: true, generated: true },
    code: { type: String, unique: false },
    qty: { type: 'int', default: 0 },
  },
});

async function start(n) {
  const ds = new DataSource({
    type: 'postgres', host: process.env.PGHOST, port: +process.env.PGPORT, username: process.env.PGUSER,
    password: process.env.PGPASSWORD, database: process.env.PGDATABASE, entities: [Item], synchronize: false,
  });
  await ds.initialize();
  const pending = (await ds.driver.createSchemaBuilder().log()).upQueries.map((q) => q.query);
  console.log('START', n, 'PENDING', pending.length);
  await ds.synchronize();
  const repo = ds.getRepository('Item');
  const saved = await repo.save({ code: 'c' + n, qty: n });
  await repo.upsert({ id: saved.id, code: 'up' + n, qty: 10 + n }, ['id']);
  await repo.increment({ id: saved.id }, 'qty', 5);
  console.log('ROW', JSON.stringify(await repo.findOneBy({ id: saved.id })));
  await ds.destroy();
}

(async () => {
  await start(1);
  await start(2);
  console.log('DONE');
})().catch((e) => { console.error(e); process.exit(1); });

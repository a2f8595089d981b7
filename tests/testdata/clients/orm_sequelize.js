// Sequelize 6 against lakesoul serve, as an application uses it first:
// connect (Sequelize sends SET client_min_messages TO warning;SET TIME ZONE
// INTERVAL '+00:00' HOUR TO MINUTE), sync() twice (an application restart),
// create, upsert (ON CONFLICT ("id") DO UPDATE SET "id"=EXCLUDED."id", …),
// increment, a transaction, describeTable and showAllTables (which read
// information_schema for schema public), findOrCreate (a pg_temp function).
// One line per fact; a failure exits non-zero. Connection from the PG*
// environment.
const { Sequelize, DataTypes } = require('sequelize');

(async () => {
  const s = new Sequelize(process.env.PGDATABASE, process.env.PGUSER, process.env.PGPASSWORD, {
    host: process.env.PGHOST, port: +process.env.PGPORT, dialect: 'postgres', logging: false,
  });
  await s.authenticate();
  const tz = await s.query('SHOW TimeZone', { plain: true });
  console.log('CONNECTED', tz.TimeZone);
  const User = s.define('User', {
    id: { type: DataTypes.INTEGER, primaryKey: true, autoIncrement: true },
    name: { type: DataTypes.STRING, allowNull: false },
    age: DataTypes.INTEGER,
  }, { tableName: 'orm_seq_users' });
  await s.sync();
  await s.sync();
  console.log('SYNCED');
  const a = await User.create({ name: 'ann', age: 30 });
  console.log('CREATED', a.id);
  await User.upsert({ id: a.id, name: 'ann2', age: 31 });
  await User.increment('age', { by: 2, where: { id: a.id } });
  await s.transaction(async (t) => { await User.create({ name: 'bob', age: 5 }, { transaction: t }); });
  console.log('ROWS', JSON.stringify(await User.findAll({ attributes: ['id', 'name', 'age'], order: [['id', 'ASC']], raw: true })));
  const desc = await s.getQueryInterface().describeTable('orm_seq_users');
  console.log('DESCRIBE', Object.keys(desc).sort().join(','), desc.id.primaryKey, desc.id.autoIncrement, desc.name.allowNull);
  const tables = await s.getQueryInterface().showAllTables();
  console.log('SHOW_ALL_TABLES', tables.includes('orm_seq_users'));
  // findOrCreate: in its transaction a CREATE OR REPLACE FUNCTION
  // pg_temp.testfunc(OUT response …) whose block INSERTs … RETURNING * INTO
  // response, the SELECT of its fields and DROP FUNCTION, in one query.
  const [c1, made1] = await User.findOrCreate({ where: { name: 'cat' }, defaults: { age: 4 } });
  const [c2, made2] = await User.findOrCreate({ where: { name: 'cat' }, defaults: { age: 9 } });
  console.log('FIND_OR_CREATE', made1, made2, c1.id === c2.id, c2.age);
  await s.close();
  console.log('DONE');
})().catch((e) => { console.error(e); process.exit(1); });

# asyncpg against lakesoul serve: a cursor (asyncpg binds a named portal and
# moves it with MOVE FORWARD n "<portal>"), records in binary, and jsonb
# parameters through a jsonb codec (asyncpg picks the codec by the type the
# server describes the parameter as: compared with or assigned to a jsonb
# column, jsonb).
# Prints one line per check.
import asyncio
import json
import sys

import asyncpg


async def main(dsn, schema):
    conn = await asyncpg.connect(dsn)
    await conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    await conn.execute(f"CREATE SCHEMA {schema}")
    await conn.execute(f"CREATE TABLE {schema}.t (id bigint, v text, PRIMARY KEY (id))")
    await conn.execute(f"INSERT INTO {schema}.t SELECT i, 'v' || i FROM generate_series(1, 100) AS g(i)")
    async with conn.transaction():
        cur = await conn.cursor(f"SELECT id, v FROM {schema}.t ORDER BY id")
        print("FETCH", [tuple(r) for r in await cur.fetch(3)])
        moved = await cur.forward(10)
        print("FORWARD", moved)
        print("FETCHROW", tuple(await cur.fetchrow()))
        n = 0
        async for _ in conn.cursor(f"SELECT id FROM {schema}.t", prefetch=9):
            n += 1
        print("ITER", n)
    print("RECORD", tuple(await conn.fetchval("SELECT row(1, 'a'::text)")))
    print("RECORDS", [tuple(r["r"]) for r in await conn.fetch("SELECT row(i, i * 2) AS r FROM generate_series(1, 2) AS g(i)")])
    await conn.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    await conn.execute(f"CREATE TABLE {schema}.j (id bigint PRIMARY KEY, d jsonb)")
    await conn.execute(f"INSERT INTO {schema}.j (id, d) VALUES ($1, $2)", 1, {"a": 1})
    await conn.execute(f"UPDATE {schema}.j SET d = $1 WHERE id = $2", {"a": 2, "b": [1]}, 1)
    await conn.execute(f"INSERT INTO {schema}.j (id, d) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET d = $3",
                       2, {}, {"x": None})
    print("JSONB", await conn.fetch(f"SELECT id, d FROM {schema}.j WHERE d @> $1 OR d = $2 ORDER BY id",
                                    {"a": 2}, {}))
    await conn.close()
    print("DONE")


asyncio.run(main(sys.argv[1], sys.argv[2]))

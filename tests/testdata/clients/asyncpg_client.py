# asyncpg against lakesoul serve: a cursor (asyncpg binds a named portal and
# moves it with MOVE FORWARD n "<portal>"), records and jsonb in binary.
# Prints one line per check.
import asyncio
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
    await conn.close()
    print("DONE")


asyncio.run(main(sys.argv[1], sys.argv[2]))

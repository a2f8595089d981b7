# psycopg 3's EnumInfo.fetch (SELECT … WHERE t.oid = %(name)s::regtype) of
# lake enum types, qualified and along the search path, and a round trip of
# enum values adapted by it. usage: psycopg_enum.py <schema>  (connection
# from PG* environment)
import sys
import psycopg
from psycopg.types.enum import EnumInfo, register_enum

s = sys.argv[1]
with psycopg.connect(autocommit=True) as conn:
    conn.execute(f"CREATE SCHEMA {s}")
    conn.execute(f"CREATE TYPE {s}.mood AS ENUM ('sad', 'ok', 'happy')")
    conn.execute(f"CREATE TABLE {s}.m (id int PRIMARY KEY, m {s}.mood)")
    info = EnumInfo.fetch(conn, f"{s}.mood")
    print("ENUMINFO", info.name, ",".join(info.labels), info.oid > 0, info.array_oid >= 0)
    conn.execute(f"SET search_path = {s}, public")
    print("UNQUALIFIED", EnumInfo.fetch(conn, "mood").labels)
    print("MISSING", EnumInfo.fetch(conn, "nope"))
    register_enum(info, conn)
    conn.execute(f"INSERT INTO {s}.m VALUES (%s, %s), (%s, %s)", (1, "happy", 2, "sad"))
    print("ROWS", conn.execute(f"SELECT id, m FROM {s}.m ORDER BY m").fetchall())
print("DONE")

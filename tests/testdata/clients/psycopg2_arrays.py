"""psycopg2 with array and jsonb columns of a lake table: lists are sent
as ARRAY[…] (psycopg2 interpolates them client side) and read back as
Python lists (psycopg2 parses PostgreSQL's array text by the column's
type OID), jsonb read back as dicts.

usage: psycopg2_arrays.py <dsn> <schema>
"""
import sys

import psycopg2
from psycopg2.extras import Json

dsn, schema = sys.argv[1], sys.argv[2]
t = schema + ".arr"
conn = psycopg2.connect(dsn)
conn.autocommit = True
cur = conn.cursor()
cur.execute("CREATE SCHEMA " + schema)
cur.execute("CREATE TABLE " + t + " (id bigint PRIMARY KEY, ids bigint[], tags text[], w double precision[], doc jsonb)")
cur.execute("INSERT INTO " + t + " VALUES (%s, %s, %s, %s, %s), (%s, %s, %s, %s, %s)",
            (1, [1, 2, None], ["a b", 'q"x', "c,d"], [1.5, -2.0], Json({"b": [1, 2], "a": {"x": None}}),
             2, [], [], None, None))
cur.execute("SELECT id, ids, tags, w, doc FROM " + t + " ORDER BY id")
for row in cur.fetchall():
    print("ROW", row)
cur.execute("SELECT id FROM " + t + " WHERE %s = ANY(ids)", (2,))
print("ANY", cur.fetchall())
cur.execute("SELECT unnest(tags) FROM " + t + " WHERE id = 1 ORDER BY 1")
print("UNNEST", [r[0] for r in cur.fetchall()])
try:
    cur.execute("INSERT INTO " + t + " (id, ids) VALUES (3, %s)", ("{1,2",))
except psycopg2.Error as e:
    print("MALFORMED", e.pgcode)
cur.execute("SELECT count(*) FROM " + t)
print("COUNT", cur.fetchone()[0])
print("DONE")

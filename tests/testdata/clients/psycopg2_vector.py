"""psycopg2 with pgvector's text form: vectors are sent as '[…]' strings
(psycopg2 interpolates parameters client side) and read back as text.

usage: psycopg2_vector.py <dsn> <schema>
"""
import sys

import psycopg2

dsn, schema = sys.argv[1], sys.argv[2]
t = schema + ".items"
conn = psycopg2.connect(dsn)
conn.autocommit = True
cur = conn.cursor()
cur.execute("CREATE SCHEMA " + schema)
cur.execute("CREATE TABLE " + t + " (id bigint PRIMARY KEY, emb vector(3))")
cur.execute("INSERT INTO " + t + " VALUES (%s, %s), (%s, %s), (%s, %s)",
            (1, "[1,2,3]", 2, "[2,2.5,3]", 3, "[9,9,9]"))
cur.execute("SELECT id, emb FROM " + t + " ORDER BY emb <-> %s LIMIT 2", ("[2,2,3]",))
print("NEAREST", cur.fetchall())
cur.execute("SELECT emb <-> %s::vector FROM " + t + " WHERE id = 2", ("[2,2,3]",))
print("DIST", cur.fetchone()[0])
try:
    cur.execute("INSERT INTO " + t + " VALUES (4, %s)", ("[1,2]",))
except psycopg2.Error as e:
    print("DIMS", e.pgcode)
print("DONE")

"""psycopg2 against lakesoul serve: parameters, a named (server-side)
cursor, copy_expert in and out, transactions. Prints one line per fact for
the Go test; any exception fails the run.

usage: psycopg2_client.py <dsn> <schema>
"""
import io
import sys
import datetime
import decimal

import psycopg2

dsn, schema = sys.argv[1], sys.argv[2]
t = schema + ".t"
conn = psycopg2.connect(dsn)
print("VERSION", conn.server_version)
cur = conn.cursor()
conn.autocommit = True
cur.execute("CREATE SCHEMA " + schema)
cur.execute("CREATE TABLE " + t + " (id bigint PRIMARY KEY, name text, price numeric(10,2), d date, ts timestamptz)")
conn.autocommit = False

# Parameters (psycopg2 interpolates them client-side) in a transaction.
cur.execute("INSERT INTO " + t + " VALUES (%s, %s, %s, %s, %s)",
            (1, "it's", decimal.Decimal("9.99"), datetime.date(2026, 1, 2),
             datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)))
conn.commit()
cur.execute("SELECT id, name, price, d, ts FROM " + t + " WHERE id = %(id)s", {"id": 1})
row = cur.fetchone()
print("PARAMS", row[0], row[1], row[2], row[3], row[4].isoformat())

# copy_expert: CSV in, with a header, NULLs and quoting.
buf = io.StringIO()
buf.write("id,name,price,d,ts\n")
for i in range(2, 5002):
    buf.write('%d,"n, %d",%d.50,2026-02-%02d,2026-02-01 00:00:00+00\n' % (i, i, i % 100, 1 + i % 28))
buf.write("5002,,,,\n")
buf.seek(0)
cur.copy_expert("COPY " + t + " FROM STDIN WITH (FORMAT csv, HEADER true)", buf)
print("COPY_IN", cur.rowcount)
conn.commit()

# copy_expert out.
out = io.StringIO()
cur.copy_expert("COPY (SELECT id, name, price FROM " + t + " WHERE id IN (2, 5002) ORDER BY id) TO STDOUT WITH CSV HEADER", out)
print("COPY_OUT", repr(out.getvalue()))
conn.commit()

# A failing COPY leaves nothing and the connection stays usable after rollback.
try:
    cur.copy_expert("COPY " + t + " FROM STDIN", io.StringIO("6000\tx\t1\t2026-01-01\t2026-01-01\nbad\n"))
    print("COPY_BAD no error")
except psycopg2.Error as e:
    print("COPY_BAD", e.pgcode)
conn.rollback()

# Named cursor: DECLARE … CURSOR, FETCH FORWARD itersize, CLOSE.
nc = conn.cursor(name="big")
nc.itersize = 1000
nc.execute("SELECT id, price FROM " + t + " ORDER BY id")
n, total = 0, decimal.Decimal(0)
for rid, price in nc:
    n += 1
    total += price or 0
nc.close()
conn.commit()
print("NAMED", n, total)

# fetchmany on a named cursor with parameters.
nc = conn.cursor(name="few")
nc.execute("SELECT id FROM " + t + " WHERE id > %s ORDER BY id", (4990,))
print("FETCHMANY", [r[0] for r in nc.fetchmany(3)])
nc.close()
conn.rollback()

# Settings psycopg2 users send.
cur.execute("SET TIME ZONE 'Europe/Berlin'")
cur.execute("SELECT ts FROM " + t + " WHERE id = 1")
print("TZ", cur.fetchone()[0].isoformat())
cur.execute("SHOW TimeZone")
print("SHOW", cur.fetchone()[0])
conn.rollback()
conn.close()
print("DONE")

# psycopg 3 against lakesoul serve: a server-side (named) cursor — psycopg 3
# DECLAREs it and then Describes and Executes the portal of its name — and
# binary COPY TO read row by row with copy.rows(). Prints one line per check.
import sys

import psycopg

dsn, schema = sys.argv[1], sys.argv[2]
with psycopg.connect(dsn, autocommit=True) as conn:
    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    conn.execute(f"CREATE SCHEMA {schema}")
    conn.execute(f"CREATE TABLE {schema}.t (id bigint, name text, score double precision, PRIMARY KEY (id))")
    conn.execute(f"INSERT INTO {schema}.t SELECT i, 'n' || i, i * 1.5 FROM generate_series(1, 1000) AS g(i)")

with psycopg.connect(dsn) as conn:
    with conn.cursor(name="big") as cur:
        cur.itersize = 100
        cur.execute(f"SELECT id, name FROM {schema}.t WHERE id <= %s ORDER BY id", (250,))
        print("DESCRIPTION", [d.name for d in cur.description])
        print("FETCHONE", cur.fetchone())
        print("FETCHMANY", cur.fetchmany(3))
        rows = cur.fetchall()
        print("FETCHALL", len(rows), rows[-1])
    with conn.cursor(name="iter") as cur:
        cur.itersize = 7
        cur.execute(f"SELECT id FROM {schema}.t ORDER BY id")
        print("ITER", sum(r[0] for r in cur))
    conn.commit()

with psycopg.connect(dsn) as conn:
    with conn.cursor() as cur:
        with cur.copy(f"COPY (SELECT id, name, score FROM {schema}.t WHERE id <= 3 ORDER BY id) TO STDOUT (FORMAT binary)") as copy:
            copy.set_types(["int8", "text", "float8"])
            print("COPY_ROWS", list(copy.rows()))
        # (An empty binary COPY TO is header and trailer in one message, as
        # PostgreSQL sends it; psycopg 3.1's copy.rows() fails on that
        # against PostgreSQL 15 itself, so it is not read here.)
print("DONE")

# psycopg 3 pipelines in autocommit against lakesoul serve: the statements
# of one pipeline (one Sync) are one implicit transaction, as on
# PostgreSQL. Prints one line per check.
import sys

import psycopg

dsn, schema = sys.argv[1], sys.argv[2]
with psycopg.connect(dsn, autocommit=True) as conn:
    conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    conn.execute(f"CREATE SCHEMA {schema}")
    conn.execute(f"CREATE TABLE {schema}.t (id int PRIMARY KEY, v text)")

    # The third INSERT fails: none of the three is kept.
    try:
        with conn.pipeline():
            conn.execute(f"INSERT INTO {schema}.t VALUES (%s, %s)", (1, "a"))
            conn.execute(f"INSERT INTO {schema}.t VALUES (%s, %s)", (2, "b"))
            conn.execute(f"INSERT INTO {schema}.t VALUES (%s, 'c' || (10 / %s))", (3, 0))
    except psycopg.Error as e:
        print("FAILED", e.sqlstate)
    print("AFTER_FAILURE", conn.execute(f"SELECT count(*) FROM {schema}.t").fetchone()[0])

    # All good: all kept.
    with conn.pipeline():
        for i in range(1, 6):
            conn.execute(f"INSERT INTO {schema}.t VALUES (%s, %s)", (i, "v"))
    print("AFTER_SUCCESS", conn.execute(f"SELECT count(*) FROM {schema}.t").fetchone()[0])

    # executemany is a pipeline too.
    with conn.cursor() as cur:
        try:
            cur.executemany(f"INSERT INTO {schema}.t VALUES (%s, 'w' || (10 / %s))", [(10, 1), (11, 0), (12, 1)])
        except psycopg.Error as e:
            print("EXECUTEMANY_FAILED", e.sqlstate)
    print("AFTER_EXECUTEMANY", conn.execute(f"SELECT count(*) FROM {schema}.t").fetchone()[0])
print("DONE")

"""Compute clients on lakesoul serve's front doors: the ADBC PostgreSQL and
Flight SQL drivers, pandas and polars over them, and DuckDB over the
table's own Parquet files (their paths from lakesoul.snapshot_files); the
Flight SQL scan's endpoints read on separate connections.

argv[1] is JSON: {"pg": libpq URI, "flight": grpc URI, "user", "password",
"big": a table with columns (id bigint, s text, f double precision, d date),
"target": an empty table (id bigint, s text) for writes, "files": the
Parquet paths of an append table "append" (id bigint, s text)}. Prints one
"<what> <value>" line per fact; the test compares them with the server's
answers.
"""
import json
import sys
import warnings

import adbc_driver_flightsql.dbapi as flightsql
import adbc_driver_postgresql.dbapi as pgdbapi
import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc


def checksum(t):
    """count, sum(id), sum of the lengths of s, sum(f) rounded, max(d)"""
    return "%d %d %d %.0f %s" % (
        t.num_rows,
        pc.sum(t.column("id")).as_py(),
        pc.sum(pc.utf8_length(t.column("s"))).as_py(),
        pc.sum(t.column("f")).as_py(),
        pc.max(t.column("d")).as_py(),
    )


def drive(name, conn, cfg, param, ingest):
    big, target = cfg["big"], cfg["target"]
    cur = conn.cursor()
    cur.execute("SELECT id, s, f, d FROM " + big)
    print(name, "read", checksum(cur.fetch_arrow_table()))
    cur.execute("SELECT s FROM %s WHERE id = %s" % (big, param), parameters=(7,))
    print(name, "param", cur.fetchall())
    # A transaction: rolled back, then committed.
    cur.execute("INSERT INTO %s VALUES (1, '%s rolled back')" % (target, name))
    conn.rollback()
    cur.execute("INSERT INTO %s VALUES (2, '%s committed')" % (target, name))
    conn.commit()
    if ingest:
        # Bulk ingest into the existing lake table, on a connection of its
        # own in autocommit mode: the driver sends the ingest without the
        # id of the transaction its DB-API connection keeps open.
        iconn = ingest()
        icur = iconn.cursor()
        data = pa.table({"id": pa.array([10, 11], pa.int64()), "s": ["%s ingest a" % name, "%s ingest b" % name]})
        ns, table = target.split(".")
        print(name, "ingest", icur.adbc_ingest(table, data, mode="append", db_schema_name=ns))
        iconn.close()
    # pandas and polars over the same connection.
    df = pd.read_sql("SELECT id, s, f, d FROM " + big, conn)
    print(name, "pandas", len(df), int(df["id"].sum()))
    pf = pl.read_database("SELECT id, s, f, d FROM " + big, connection=conn)
    print(name, "polars", pf.height, pf["id"].sum())
    cur.close()


def main():
    cfg = json.loads(sys.argv[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pgconn = pgdbapi.connect(cfg["pg"])
    # (its adbc_ingest looks the table up with $1::regclass, which does not
    # resolve lake tables yet)
    drive("adbc-postgresql", pgconn, cfg, "$1", None)
    pgconn.close()
    def flight(autocommit=False):
        # The DB-API module only warns when it cannot turn autocommit off
        # (the driver found no transaction support in GetSqlInfo) and then
        # commits every statement: an error here instead.
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            return flightsql.connect(
                cfg["flight"],
                db_kwargs={"username": cfg["user"], "password": cfg["password"]},
                autocommit=autocommit,
            )

    fconn = flight()
    drive("adbc-flightsql", fconn, cfg, "$1", lambda: flight(True))
    fconn.close()
    # The scan's endpoints (one per bucket), each read on a connection of
    # its own, as a distributed reader's tasks would.
    pconn = flight(True)
    pcur = pconn.cursor()
    parts, _ = pcur.adbc_execute_partitions("SELECT id, s, f, d FROM " + cfg["big"])
    tables = []
    for p in parts:
        rconn = flight(True)
        rcur = rconn.cursor()
        rcur.adbc_read_partition(p)
        tables.append(rcur.fetch_arrow_table())
        rcur.close()
        rconn.close()
    pcur.close()
    pconn.close()
    print("adbc-flightsql partitions", len(parts), checksum(pa.concat_tables(tables)))
    # DuckDB over the append table's files.
    files = cfg["files"]
    con = duckdb.connect()
    r = con.execute(
        "SELECT count(*), sum(id), sum(length(s)) FROM read_parquet(?)", [files]
    ).fetchone()
    print("duckdb files", r[0], int(r[1]), int(r[2]))


if __name__ == "__main__":
    main()

"""One client of `lakesoul bench clients`: loads a lake table into memory
(a pandas DataFrame or an Arrow table) the way argv[1] (JSON) says, and
prints one JSON object: rows, seconds (the load alone, imports and
connecting excluded), cpu_s (this process's CPU time over the load, all
threads), the client's peak RSS in MiB, and a checksum (count,
sum of one integer column, total length of one text column) that every
client must agree on.

Clients: psycopg-read_sql (pandas.read_sql over psycopg 3), adbc-postgresql
(fetch_arrow_table over pgwire), adbc-flightsql (one stream),
adbc-flightsql-parallel (the query's endpoints read by N threads through
adbc_execute_partitions / adbc_read_partition), lakesoul-python (LakeSoul's
own reader over the catalog and the files).
"""
import json
import resource
import sys
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.compute as pc


def peak_rss_mb():
    # VmHWM is this program's own peak (ru_maxrss would carry the peak of
    # the process it was forked from across exec).
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def checksum(t, int_col, text_col):
    return [t.num_rows, pc.sum(t.column(int_col)).as_py() or 0,
            pc.sum(pc.utf8_length(t.column(text_col))).as_py() or 0]


def main():
    cfg = json.loads(sys.argv[1])
    client, query = cfg["client"], cfg["query"]
    endpoints = 1
    int_col, text_col = cfg["int_col"], cfg["text_col"]
    if client == "psycopg-read_sql":
        import pandas as pd
        import psycopg
        conn = psycopg.connect(cfg["pg"])
        warnings.simplefilter("ignore")  # pandas: not a SQLAlchemy connection
        start, cpu = time.perf_counter(), time.process_time()
        df = pd.read_sql(query, conn)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        t = pa.Table.from_pandas(df[[int_col, text_col]], preserve_index=False)
    elif client == "adbc-postgresql":
        import adbc_driver_postgresql.dbapi as pg
        conn = pg.connect(cfg["pg"])
        cur = conn.cursor()
        start, cpu = time.perf_counter(), time.process_time()
        cur.execute(query)
        t = cur.fetch_arrow_table()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    elif client in ("adbc-flightsql", "adbc-flightsql-parallel"):
        import adbc_driver_flightsql.dbapi as fs
        def connect():
            return fs.connect(cfg["flight"], db_kwargs={"username": cfg["user"], "password": cfg["password"]},
                              autocommit=True)

        conn = connect()
        cur = conn.cursor()
        # The readers' connections, opened before the clock starts (a DB-API
        # connection serves one thread at a time).
        readers = [connect() for _ in range(cfg.get("threads", 4))] if client != "adbc-flightsql" else []
        start, cpu = time.perf_counter(), time.process_time()
        if client == "adbc-flightsql":
            cur.execute(query)
            t = cur.fetch_arrow_table()
        else:
            parts, _ = cur.adbc_execute_partitions(query)
            endpoints = len(parts)

            def read(i):
                c = readers[i].cursor()
                out = []
                for p in parts[i::len(readers)]:
                    c.adbc_read_partition(p)
                    out.append(c.fetch_arrow_table())
                c.close()
                return out

            with ThreadPoolExecutor(len(readers)) as ex:
                t = pa.concat_tables([x for xs in ex.map(read, range(len(readers))) for x in xs])
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    elif client == "lakesoul-python":
        from lakesoul.catalog import LakeSoulCatalog
        from lakesoul.metadata import NativeMetadataClient
        # The catalog's libpq keyword string (a unix socket works too).
        cat = LakeSoulCatalog(_client=NativeMetadataClient(cfg["catalog"]), namespace=cfg["namespace"])
        start, cpu = time.perf_counter(), time.process_time()
        t = cat.table(cfg["table"]).scan(thread_count=cfg.get("threads", 2)).to_arrow_table()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    else:
        raise SystemExit("unknown client " + client)
    print(json.dumps({"rows": t.num_rows, "seconds": seconds, "cpu_s": cpu,
                      "peak_rss_mb": peak_rss_mb(),
                      "endpoints": endpoints, "checksum": checksum(t, int_col, text_col)}))


if __name__ == "__main__":
    main()

"""Flink (PyPI apache-flink, a local mini cluster) on lakesoul serve through
its JDBC connector (Maven Central) and pgjdbc.

argv[1] is JSON: {"url": jdbc URL, "user", "password", "jars": [connector
jar, pgjdbc jar], "orders": a table (id bigint PRIMARY KEY, customer text,
amount numeric(10,2)), "totals": a table (customer text PRIMARY KEY, n
bigint, total numeric(12,2)), "kv": a table (id bigint PRIMARY KEY, v
text), "kvcdc": a CDC table (id bigint PRIMARY KEY, v text, op text),
"events": a table (id bigint, customer text) without a key, "every":
the step of the orders appended to it, "base_url" and "database": the server
as Flink's PostgreSQL catalog takes it, "schema": orders' schema}. Prints
one "<what> <value>" line per fact.

Streaming: a GROUP BY over orders is an updating changelog that the JDBC sink
upserts into totals by its primary key (INSERT … ON CONFLICT … DO UPDATE);
a changelog of inserts, updates and deletes made in the job is applied to kv
and kvcdc (upserts, and DELETE … WHERE id = ?). Batch: orders read as a source split
into range queries on id, aggregated by Flink, and appended in part to
events; the tables listed by Flink's PostgreSQL catalog, and joined.
"""
import json
import sys

from pyflink.common import Row, RowKind, Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.java_gateway import get_gateway
from pyflink.table import EnvironmentSettings, StreamTableEnvironment, TableEnvironment
from pyflink.table.catalog import Catalog


def jdbc_options(cfg, table, extra=""):
    return (
        "'connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', 'username' = '%s', 'password' = '%s'%s"
        % (cfg["url"], table, cfg["user"], cfg["password"], extra)
    )


def configure(t_env, cfg):
    conf = t_env.get_config()
    conf.set("pipeline.jars", ";".join("file://" + j for j in cfg["jars"]))
    conf.set("parallelism.default", "2")


def streaming(cfg):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env, environment_settings=EnvironmentSettings.in_streaming_mode())
    configure(t_env, cfg)
    t_env.execute_sql(
        "CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2), PRIMARY KEY (id) NOT ENFORCED) WITH (%s)"
        % jdbc_options(cfg, cfg["orders"]))
    # Flushed every "flush" changes (the connector keeps the newest change
    # per key in between): a key is inserted by one flush and updated by the
    # next ones, by the two sink tasks at once.
    t_env.execute_sql(
        "CREATE TABLE totals (customer STRING, n BIGINT, total DECIMAL(12, 2), PRIMARY KEY (customer) NOT ENFORCED) WITH (%s)"
        % jdbc_options(cfg, cfg["totals"], ", 'sink.buffer-flush.max-rows' = '%d', 'sink.buffer-flush.interval' = '0'"
                       % cfg["flush"]))
    t_env.execute_sql(
        "INSERT INTO totals SELECT customer, COUNT(*), CAST(SUM(amount) AS DECIMAL(12, 2)) FROM orders GROUP BY customer"
    ).wait()
    print("streamed totals")

    t_env.execute_sql(
        "CREATE TABLE kv (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (%s)"
        % jdbc_options(cfg, cfg["kv"], ", 'sink.buffer-flush.max-rows' = '1', 'sink.parallelism' = '1'"))
    # A changelog as a CDC source gives it: it updates and deletes rows the
    # job never saw inserted. Flink drops such deletes when it keeps the
    # rows itself (ChangelogNormalize, the sink's upsert materializer); a
    # CDC pipeline into a table that already has rows turns that off.
    t_env.get_config().set("table.exec.sink.upsert-materialize", "NONE")
    changes = []
    for kind, i, v in [
        (RowKind.INSERT, 10, "flink a"),
        (RowKind.INSERT, 11, "flink b"),
        (RowKind.UPDATE_BEFORE, 1, "one"),
        (RowKind.UPDATE_AFTER, 1, "flink updated one"),
        (RowKind.DELETE, 2, "two"),
        (RowKind.INSERT, 12, "flink c"),
        (RowKind.DELETE, 11, "flink b"),
        (RowKind.UPDATE_AFTER, 3, "flink updated three"),
    ]:
        r = Row(i, v)
        r.set_row_kind(kind)
        changes.append(r)
    ds = env.from_collection(changes, type_info=Types.ROW_NAMED(["id", "v"], [Types.LONG(), Types.STRING()])).set_parallelism(1)
    # The same changelog into a CDC table too (its op column left to the
    # server: deletes become delete markers).
    t_env.execute_sql(
        "CREATE TABLE kvcdc (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED) WITH (%s)"
        % jdbc_options(cfg, cfg["kvcdc"], ", 'sink.buffer-flush.max-rows' = '1', 'sink.parallelism' = '1'"))
    t_env.create_temporary_view("changes", t_env.from_changelog_stream(ds))
    stmts = t_env.create_statement_set()
    stmts.add_insert_sql("INSERT INTO kv SELECT * FROM changes")
    stmts.add_insert_sql("INSERT INTO kvcdc SELECT * FROM changes")
    stmts.execute().wait()
    print("streamed kv")


def batch(cfg):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    configure(t_env, cfg)
    t_env.execute_sql(
        "CREATE TABLE orders (id BIGINT, customer STRING, amount DECIMAL(10, 2)) WITH (%s)"
        % jdbc_options(cfg, cfg["orders"],
                       ", 'scan.partition.column' = 'id', 'scan.partition.num' = '4', 'scan.partition.lower-bound' = '1',"
                       " 'scan.partition.upper-bound' = '%d', 'scan.fetch-size' = '500'" % cfg["n"]))
    with t_env.execute_sql(
            "SELECT COUNT(*), SUM(id), CAST(SUM(amount) AS DECIMAL(18, 2)), COUNT(DISTINCT customer) FROM orders").collect() as res:
        for r in res:
            print("batch orders", r[0], r[1], r[2], r[3])
    # An append: the JDBC sink without a key sends plain INSERT batches.
    t_env.execute_sql(
        "CREATE TABLE events (id BIGINT, customer STRING) WITH (%s)" % jdbc_options(cfg, cfg["events"]))
    t_env.execute_sql("INSERT INTO events SELECT id, customer FROM orders WHERE id %% %d = 0" % cfg["every"]).wait()
    print("batch appended")
    t_env.execute_sql(
        "CREATE TABLE totals (customer STRING, n BIGINT, total DECIMAL(12, 2)) WITH (%s)" % jdbc_options(cfg, cfg["totals"]))
    with t_env.execute_sql("SELECT customer, n, total FROM totals ORDER BY customer").collect() as res:
        print("batch totals", ";".join("%s=%d/%s" % (r[0], r[1], r[2]) for r in res))
    t_env.execute_sql(
        "CREATE TABLE kv (id BIGINT, v STRING) WITH (%s)" % jdbc_options(cfg, cfg["kv"]))
    with t_env.execute_sql("SELECT id, v FROM kv ORDER BY id").collect() as res:
        print("batch kv", ";".join("%d=%s" % (r[0], r[1]) for r in res))
    t_env.execute_sql(
        "CREATE TABLE kvcdc (id BIGINT, v STRING) WITH (%s)" % jdbc_options(cfg, cfg["kvcdc"]))
    with t_env.execute_sql("SELECT id, v FROM kvcdc ORDER BY id").collect() as res:
        print("batch kvcdc", ";".join("%d=%s" % (r[0], r[1]) for r in res))

    # Flink's PostgreSQL catalog: the server's tables found through
    # information_schema and pg_catalog, their columns and keys through
    # JDBC metadata, then a join and an aggregate over two of them. (The
    # connector's jar registers two factories for CREATE CATALOG … 'jdbc',
    # which Flink refuses as ambiguous, and its deprecated JdbcCatalog, the
    # one pyflink wraps, fails with a ClassCastException: the PostgreSQL
    # catalog's class is made directly.)
    gw = get_gateway()
    pg_catalog = gw.jvm.org.apache.flink.connector.jdbc.postgres.database.catalog.PostgresCatalog(
        gw.jvm.Thread.currentThread().getContextClassLoader(), "lake", cfg["database"], cfg["user"], cfg["password"],
        cfg["base_url"])
    t_env.register_catalog("lake", Catalog(pg_catalog))
    with t_env.execute_sql("SHOW TABLES FROM lake.`%s`" % cfg["database"]).collect() as res:
        names = sorted(r[0] for r in res if r[0].startswith(cfg["schema"] + "."))
    print("catalog tables", ",".join(names))
    q = ("SELECT o.customer, COUNT(*), CAST(SUM(o.amount) AS DECIMAL(18, 2)), MAX(t.n) FROM lake.`{db}`.`{o}` o"
         " JOIN lake.`{db}`.`{t}` t ON o.customer = t.customer WHERE o.id % 3 = 0 GROUP BY o.customer ORDER BY o.customer"
         ).format(db=cfg["database"], o=cfg["orders"], t=cfg["totals"])
    with t_env.execute_sql(q).collect() as res:
        print("catalog join", ";".join("%s=%d/%s/%d" % (r[0], r[1], r[2], r[3]) for r in res))


def main():
    cfg = json.loads(sys.argv[1])
    streaming(cfg)
    batch(cfg)


if __name__ == "__main__":
    main()

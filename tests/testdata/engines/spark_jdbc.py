"""Spark 3.5 (PyPI pyspark, local[2]) on lakesoul serve through pgjdbc.

argv[1] is JSON: {"url": jdbc URL, "user", "password", "jar": pgjdbc jar,
"big": a table (id bigint, s text, f double precision, d date) with ids
1..n, "n", "target": a table (id bigint PRIMARY KEY, s text)}. Prints one
"<what> <value>" line per fact.
"""
import json
import sys

from pyspark.sql import SparkSession


def main():
    cfg = json.loads(sys.argv[1])
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("lakesoul-spark-jdbc")
        .config("spark.jars", cfg["jar"])
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    url = cfg["url"]
    props = {"user": cfg["user"], "password": cfg["password"], "driver": "org.postgresql.Driver"}
    # A partitioned parallel read: four range queries on id.
    df = spark.read.jdbc(url, cfg["big"], column="id", lowerBound=1, upperBound=cfg["n"],
                         numPartitions=4, properties=props)
    print("partitions", df.rdd.getNumPartitions())
    r = df.selectExpr("count(*)", "sum(id)", "sum(length(s))").collect()[0]
    print("read", r[0], r[1], r[2])
    # Filters pushed down into the JDBC query.
    f = df.filter("id < 100 AND s = 'xxx'")
    plan = f._jdf.queryExecution().executedPlan().toString()
    print("pushed", "PushedFilters: [*IsNotNull(id), *IsNotNull(s), *LessThan(id,100), *EqualTo(s,xxx)]" in plan)
    print("filtered", f.count())
    # DataFrame append.
    out = spark.createDataFrame([(1, "spark a"), (2, "spark b"), (3, "spark c")], "id long, s string")
    out.write.jdbc(url, cfg["target"], mode="append", properties=props)
    # An upsert: an ON CONFLICT batch through pgjdbc in Spark's JVM.
    jvm = spark.sparkContext._jvm
    conn = jvm.java.sql.DriverManager.getConnection(url, cfg["user"], cfg["password"])
    conn.setAutoCommit(False)
    st = conn.prepareStatement(
        "INSERT INTO %s (id, s) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET s = EXCLUDED.s" % cfg["target"])
    for i, s in [(2, "upserted b"), (4, "new d")]:
        st.setLong(1, i)
        st.setString(2, s)
        st.addBatch()
    print("batch", list(st.executeBatch()))
    conn.commit()
    conn.close()
    rows = spark.read.jdbc(url, cfg["target"], properties=props).orderBy("id").collect()
    print("target", ";".join("%d=%s" % (r.id, r.s) for r in rows))
    spark.stop()


if __name__ == "__main__":
    main()

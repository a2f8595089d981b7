"""Ray Data and Daft on lakesoul serve (the second engine tier).

argv[1] is JSON: {"pg": libpq URI, "catalog": libpq keyword string of the
catalog, "namespace", "table" (with columns id bigint and s text), "query"}.
Prints "<what> <count> <sum(id)> <sum(length(s))>" per read: Ray Data's
read_sql over psycopg (split across tasks), and LakeSoul's own Ray and Daft
entry points (scan().to_ray(), scan().to_daft()) over the catalog and files.
"""
import json
import sys

import daft
import psycopg
import ray
from lakesoul.catalog import LakeSoulCatalog
from lakesoul.metadata import NativeMetadataClient


def main():
    cfg = json.loads(sys.argv[1])
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    # Four tasks, each reading MOD(ABS(abs(id)), 4) = i (Ray's default hash,
    # MD5, takes no bigint in PostgreSQL either).
    ds = ray.data.read_sql(cfg["query"], lambda: psycopg.connect(cfg["pg"]), shard_keys=["id"], shard_hash_fn="abs", override_num_blocks=4)
    ds = ds.map_batches(lambda b: {"id": b["id"], "n": [len(x) for x in b["s"]]}, batch_format="numpy")
    print("ray-read_sql", ds.count(), ds.sum("id"), ds.sum("n"))
    cat = LakeSoulCatalog(_client=NativeMetadataClient(cfg["catalog"]), namespace=cfg["namespace"])
    scan = cat.table(cfg["table"]).scan()
    rds = scan.to_ray().map_batches(lambda b: {"id": b["id"], "n": [len(x) for x in b["s"]]}, batch_format="numpy")
    print("lakesoul-to_ray", rds.count(), rds.sum("id"), rds.sum("n"))
    df = (scan.to_daft().with_column("n", daft.functions.length(daft.col("s")))
          .agg(daft.col("id").count().alias("c"), daft.col("id").sum().alias("i"), daft.col("n").sum().alias("n"))
          .to_pydict())
    print("lakesoul-to_daft", df["c"][0], df["i"][0], df["n"][0])
    ray.shutdown()


if __name__ == "__main__":
    main()

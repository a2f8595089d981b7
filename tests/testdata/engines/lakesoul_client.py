"""LakeSoul's own Python package (PyPI lakesoul) on a lakesoul serve catalog.

Connects to the catalog PostgreSQL as LakeSoul's clients do
(LakeSoulCatalog(pg_url=..., pg_username=..., pg_password=...)) and runs one
command, given as JSON in argv[1]:

  {"op": "read", "namespace", "table", ["partitions": {col: value}],
   ["filter": [col, value]], ["columns": [...]], ["threads": n]}
      prints each row of lakesoul.arrow's dataset as one line, values in
      PostgreSQL's text form joined by "|" (NULL for null), in column order;
  {"op": "write", "namespace", "table", "rows": [[...]], "format": f}
      writes rows (JSON values, in the table's column order; dates as
      ISO strings) with LakeSoulTable.write_arrow and prints the files
      ("repeat": n, "step": k: n commits, the first column plus i*k);
  {"op": "create", "namespace", "table", "path", "columns": [[name, type]],
   "primary_keys", "partition_by", "hash_bucket_num"}
      creates a table with LakeSoulCatalog.create_table (types: pyarrow
      factory names, e.g. "int64", "string", "uint64").

An error is printed as "ERROR <class>: <message>" with exit status 3.
"""
import datetime
import decimal
import json
import os
import sys

import pyarrow as pa
import pyarrow.compute as pc
from lakesoul.catalog import LakeSoulCatalog


def pg_text(v):
    """v in PostgreSQL's text output form (TimeZone UTC)."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "t" if v else "f"
    if isinstance(v, float):
        if v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    if isinstance(v, datetime.datetime):
        s = v.strftime("%Y-%m-%d %H:%M:%S")
        if v.microsecond:
            s += (".%06d" % v.microsecond).rstrip("0")
        if v.tzinfo is not None:
            off = v.utcoffset()
            assert off == datetime.timedelta(0), off
            s += "+00"
        return s
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, bytes):
        return "\\x" + v.hex()
    if isinstance(v, list):
        return "{" + ",".join(pg_text(x) for x in v) + "}"
    return str(v)


def catalog(cmd):
    return LakeSoulCatalog(
        pg_url=os.environ["LAKESOUL_PG_URL"],
        pg_username=os.environ["LAKESOUL_PG_USERNAME"],
        pg_password=os.environ["LAKESOUL_PG_PASSWORD"],
        namespace=cmd["namespace"],
    )


def read(cmd):
    table = catalog(cmd).table(cmd["table"])
    flt = None
    if cmd.get("filter"):
        # [column, value]: column = value, the value cast to the column's type
        col, val = cmd["filter"]
        typ = table.schema.field(col).type
        flt = pc.field(col) == pa.scalar(arrow_value(val, typ), type=typ)
    scan = table.scan(
        partitions=cmd.get("partitions") or None,
        columns=cmd.get("columns"),
        filter=flt,
        thread_count=cmd.get("threads", 1),
    )
    data = scan.to_arrow_table()
    names = cmd.get("columns") or [f.name for f in table.schema]
    cols = [data.column(n).to_pylist() for n in names]
    for i in range(data.num_rows):
        print("|".join(pg_text(c[i]) for c in cols))


def arrow_value(v, t):
    if v is None:
        return None
    if pa.types.is_date(t):
        return datetime.date.fromisoformat(v)
    if pa.types.is_timestamp(t):
        return datetime.datetime.fromisoformat(v)
    if pa.types.is_decimal(t):
        return decimal.Decimal(v)
    return v


def write(cmd):
    table = catalog(cmd).table(cmd["table"])
    schema = table.schema
    names = cmd.get("columns") or schema.names
    fields = [schema.field(n) for n in names]
    kwargs = {}
    if cmd.get("format"):
        kwargs["format"] = cmd["format"]
    # "repeat": n writes (and commits) the rows n times, adding i * step to
    # the first column of the i-th time (distinct keys per commit).
    for i in range(cmd.get("repeat", 1)):
        rows = [[r[0] + i * cmd.get("step", 0)] + r[1:] for r in cmd["rows"]]
        arrays = [
            pa.array([arrow_value(r[j], f.type) for r in rows], type=f.type)
            for j, f in enumerate(fields)
        ]
        data = pa.Table.from_arrays(arrays, schema=pa.schema(fields))
        result = table.write_arrow(data, **kwargs)
        for f in result.files:
            print(f.path)


def arrow_type(name):
    if name == "timestamp_utc":
        return pa.timestamp("us", tz="UTC")
    return getattr(pa, name)()


def create(cmd):
    fields = [pa.field(n, arrow_type(t)) for n, t in cmd["columns"]]
    catalog(cmd).create_table(
        cmd["table"],
        path=cmd["path"],
        schema=pa.schema(fields),
        primary_keys=cmd.get("primary_keys", ()),
        partition_by=cmd.get("partition_by", ()),
        hash_bucket_num=cmd.get("hash_bucket_num"),
    )
    print("created")


def main():
    cmd = json.loads(sys.argv[1])
    try:
        {"read": read, "write": write, "create": create}[cmd["op"]](cmd)
    except Exception as e:  # the test reads the failure
        print("ERROR %s: %s" % (type(e).__name__, e))
        sys.exit(3)


if __name__ == "__main__":
    main()

"""psycopg2 reading json, jsonb, arrays, uuid and interval results of
queries over lake tables: each must parse into its Python type (dict/list,
list, uuid.UUID, timedelta). Prints one line per fact for the Go test; any
exception fails the run.

usage: psycopg2_types.py <dsn> <schema>
"""
import sys

import psycopg2
import psycopg2.extras

dsn, schema = sys.argv[1], sys.argv[2]
t = schema + ".d"
psycopg2.extras.register_uuid()
conn = psycopg2.connect(dsn)
conn.autocommit = True
cur = conn.cursor()
cur.execute("CREATE SCHEMA " + schema)
cur.execute("CREATE TABLE " + t + " (id bigint PRIMARY KEY, doc jsonb, raw json, uid uuid, tag text)")
cur.execute("INSERT INTO " + t + " VALUES (1, %s, %s, %s, 'a')",
            (psycopg2.extras.Json({"b": [1, 2.5], "a": {"c": "x"}}), '{"k": [1,  2]}',
             "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"))


def show(label, v):
    print(label, type(v).__name__, repr(v))


cur.execute("SELECT doc, raw, uid, doc -> 'b', doc ->> 'a', ARRAY[id, 2], ARRAY[tag, NULL], "
            "interval '1 day 02:03:04.5', ARRAY[uid], doc @> '{\"b\": [1]}', doc ? 'a', doc #>> '{a,c}', "
            "'{\"z\": 1, \"y\": [true, null]}'::jsonb, ARRAY['{\"q\": 1}'::jsonb] FROM " + t)
row = cur.fetchone()
names = ["JSONB", "JSON", "UUID", "ARROW", "ARROW_TEXT", "INT8_ARRAY", "TEXT_ARRAY", "INTERVAL", "UUID_ARRAY",
         "CONTAINS", "EXISTS", "PATH_TEXT", "JSONB_LITERAL", "JSONB_ARRAY"]
for label, v in zip(names, row):
    show(label, v)
print("OIDS", [d.type_code for d in cur.description])

# A json operator PostgreSQL does not have fails with its SQLSTATE; the
# connection stays usable.
try:
    cur.execute("SELECT raw @> '{}' FROM " + t)
    print("NO_OPERATOR no error")
except psycopg2.Error as e:
    print("NO_OPERATOR", e.pgcode)
cur.execute("SELECT count(*) FROM " + t)
print("AFTER_ERROR", cur.fetchone()[0])
conn.close()
print("DONE")

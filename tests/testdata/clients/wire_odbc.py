# psqlodbc (Debian's odbc-postgresql) through pyodbc against lakesoul serve.
# With server-side prepare psqlodbc names its statements and drops them
# with DEALLOCATE before it prepares the next one on the same handle: a
# DEALLOCATE that dropped nothing made its second statement fail with
# 42P05 (issue 14, item 3). Prints one line per fact for the Go test.
# usage: python3 wire_odbc.py <driver .so> <host> <port> <user> <password> <schema>
import sys

import pyodbc

driver, host, port, user, password, schema = sys.argv[1:7]
conn = pyodbc.connect(
    f"DRIVER={{{driver}}};SERVER={host};PORT={port};DATABASE=lakesoul;UID={user};PWD={password};"
    "SSLmode=disable;UseServerSidePrepare=1;UseDeclareFetch=0",
    autocommit=True,
)
cur = conn.cursor()
cur.execute(f"CREATE SCHEMA {schema}")
cur.execute(f"CREATE TABLE {schema}.t (id int PRIMARY KEY, v text)")
for i in range(1, 4):
    cur.execute(f"INSERT INTO {schema}.t VALUES (?, ?)", i, f"v{i}")
print("INSERTED", cur.execute(f"SELECT count(*) FROM {schema}.t").fetchone()[0])
print("ROW", cur.execute(f"SELECT v FROM {schema}.t WHERE id = ?", 2).fetchone()[0])
print("ROW", cur.execute(f"SELECT id FROM {schema}.t WHERE v = ?", "v3").fetchone()[0])
n = cur.execute(f"UPDATE {schema}.t SET v = ? WHERE id = ?", "new", 1).rowcount
print("UPDATE", n, cur.execute(f"SELECT v FROM {schema}.t WHERE id = ?", 1).fetchone()[0])
try:
    cur.execute(f"SELECT nope FROM {schema}.t WHERE id = ?", 1)
except pyodbc.Error as e:
    print("ERROR", e.args[0])
print("AFTER_ERROR", cur.execute(f"SELECT count(*) FROM {schema}.t WHERE id > ?", 0).fetchone()[0])
conn.close()
print("DONE")

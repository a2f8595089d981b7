# psycopg2 LISTEN: one connection LISTENs lakesoul_commits and a user
# channel, another commits to a table and NOTIFYs; the first collects the
# notifications with conn.poll() and conn.notifies, as psycopg2's docs show.
import json
import select
import sys
import time

import psycopg2

dsn, schema = sys.argv[1], sys.argv[2]
listener = psycopg2.connect(dsn)
listener.autocommit = True
writer = psycopg2.connect(dsn)
writer.autocommit = True
lc = listener.cursor()
lc.execute("LISTEN lakesoul_commits")
lc.execute("LISTEN psy_chan")
wc = writer.cursor()
wc.execute("CREATE SCHEMA %s" % schema)
wc.execute("CREATE TABLE %s.t (id bigint, v text, PRIMARY KEY (id))" % schema)
wc.execute("INSERT INTO %s.t VALUES (1, 'a'), (2, 'b')" % schema)
wc.execute("NOTIFY psy_chan, 'hello from psycopg2'")
wc.execute("SELECT pg_backend_pid()")
writer_pid = wc.fetchone()[0]

commit, user = None, None
deadline = time.time() + 30
while (commit is None or user is None) and time.time() < deadline:
    if select.select([listener], [], [], 1) == ([], [], []):
        continue
    listener.poll()
    while listener.notifies:
        n = listener.notifies.pop(0)
        if n.channel == "lakesoul_commits":
            p = json.loads(n.payload)
            if p["table"] == schema + ".t":
                commit = (p, n.pid)
        elif n.channel == "psy_chan":
            user = n
if commit is None or user is None:
    print("TIMEOUT", commit, user)
    sys.exit(1)
p, pid = commit
print("COMMIT", p["table"], p["partition"], p["version"], p["commit_op"], pid == listener.get_backend_pid())
print("USER", user.payload, user.pid == writer_pid)
wc.execute("DROP SCHEMA %s CASCADE" % schema)
print("DONE")

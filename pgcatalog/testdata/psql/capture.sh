#!/bin/sh
# capture.sh re-captures what psql sends for each backslash command listed in
# commands.txt, from the log of a real PostgreSQL 15 run with
# log_statement=all, into <name>.sql next to this script.
#
# Usage: capture.sh LOGFILE psql-connection-args...
# The database must hold real tables s.t (bigint PK "id", plus columns) and
# s.u (no PK), so psql follows the same code paths it does for lake tables.
# Object OIDs in the captured text are replaced by {{OID:<relation>}}.
set -eu
dir=$(dirname "$0")
log=$1
shift
while IFS='|' read -r name cmd; do
	[ -z "$name" ] && continue
	start=$(wc -c <"$log")
	psql -X -q "$@" -c "$cmd" >/dev/null
	sleep 0.3
	tail -c +"$((start + 1))" "$log" | awk '
		/^[0-9]{4}-[0-9]{2}-[0-9]{2} / { on = 0 }
		/ LOG:  (statement|execute [^:]*): / {
			on = 1
			sub(/^.* LOG:  (statement|execute [^:]*): /, "")
			if (n++) print ""
			first = 1
		}
		on && !first { sub(/^\t/, "") }
		on { print; first = 0 }
	' >"$dir/$name.sql"
	for rel in s.t s.u s.t_pkey; do
		oid=$(psql -X -At "$@" -c "SELECT '$rel'::regclass::oid")
		sed -i "s/'$oid'/'{{OID:$rel}}'/g" "$dir/$name.sql"
	done
done <"$dir/commands.txt"

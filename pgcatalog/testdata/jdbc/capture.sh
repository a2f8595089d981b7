#!/bin/sh
# capture.sh re-captures pgjdbc's DatabaseMetaData queries (Capture.java) from
# the log of a real PostgreSQL 15 run with log_statement=all, into <name>.sql
# next to this script, one file per method.
#
# Usage: capture.sh LOGFILE JDBC-URL   (e.g. jdbc:postgresql://127.0.0.1:5432/db?user=postgres)
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
log=$1
start=$(wc -c <"$log")
java -cp /usr/share/java/postgresql.jar "$dir/Capture.java" "$2"
sleep 0.5
tail -c +"$((start + 1))" "$log" | awk -v dir="$dir" '
	/ LOG:  execute [^:]*: / {
		sub(/^.* LOG:  execute [^:]*: /, "")
		if (match($0, /^SELECT '\''mark:[A-Za-z]+'\''$/)) {
			name = substr($0, 14, length($0) - 14)
			next
		}
		if (name != "" && name != "end") print $0 ";" >(dir "/" name ".sql")
	}
'

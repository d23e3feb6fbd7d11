#!/bin/sh
# sqlite_insert.sh DB ROWS - `make bench`'s "sqlite" workload: sqlite3
# inserts ROWS rows, one INSERT statement each, in one transaction, into a
# fresh on-disk database DB, and prints the row count. The SQL is written
# once, to DB.ROWS.sql, outside what is measured: only sqlite3 (and the
# shell that execs it, and rm) run under the tracer. SQLITE_WRAP, when
# set, is a command sqlite3 is run under (bench/run.sh: heaptrack, which
# records only the process it starts).
db=$1 rows=${2:-200000}
sql=$db.$rows.sql
if [ ! -s "$sql" ]; then
	awk -v n="$rows" 'BEGIN {
		print "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, value REAL);"
		print "BEGIN;"
		for (i = 1; i <= n; i++)
			printf "INSERT INTO t(name, value) VALUES (%cname-%d%c, %d.5);\n", 39, i * 7919 % n, 39, i
		print "COMMIT;"
		print "SELECT count(*) FROM t;"
	}' >"$sql.tmp" && mv "$sql.tmp" "$sql" || exit 2
	[ -n "${SQLITE_PREPARE_ONLY:-}" ] && exit 0
fi
rm -f "$db" "$db-journal"
exec ${SQLITE_WRAP:-} sqlite3 "$db" <"$sql"

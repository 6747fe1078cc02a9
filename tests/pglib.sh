# PostgreSQL for the tests and benchmarks: a cluster of its own, made
# with initdb in a temporary directory owned by the postgres user,
# listening only on a Unix socket in that directory on a port of its
# own. Source it after lib.sh (or bench/lib.sh) and call pg_start; it
# stops the cluster (immediately) when the shell exits.

pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
pg_postgres=$pg_bin/postgres

# pg_require: the binaries, and the postgres user to run them as.
pg_require() {
	[ -x "$pg_postgres" ] && [ -x "$pg_bin/initdb" ] &&
		[ -x "$pg_bin/pgbench" ] || skip "no PostgreSQL in $pg_bin"
	id postgres >/dev/null 2>&1 || skip "no postgres user"
	# grep reads it all: readelf killed by SIGPIPE fails under pipefail.
	readelf -n "$pg_postgres" 2>/dev/null | grep lwlock__wait__start \
		>/dev/null || skip "$pg_postgres has no USDT probes"
}

pg_as() {
	runuser -u postgres -- "$@"
}

# pg_start [PORT]: a fresh cluster in $pg_dir, started.
pg_start() {
	pg_port=${1:-$((20000 + $$ % 20000))}
	pg_dir=$(mktemp -d /tmp/locktop-pg.XXXXXX)
	chown postgres: "$pg_dir"
	chmod 700 "$pg_dir"
	pg_data=$pg_dir/data
	trap 'pg_stop; end_jobs; rm -rf "$tmpdir"' EXIT
	pg_as "$pg_bin/initdb" -D "$pg_data" -A trust -U postgres \
		--no-sync >"$pg_dir/initdb.log" 2>&1 ||
		{ cat "$pg_dir/initdb.log" >&2; fail "initdb failed"; }
	pg_as "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_dir/server.log" -w \
		-o "-k $pg_dir -p $pg_port -c listen_addresses= \
			-c max_connections=40 -c fsync=off" start >/dev/null ||
		{ cat "$pg_dir/server.log" >&2; fail "the server did not start"; }
}

pg_stop() {
	[ -n "${pg_dir:-}" ] || return 0
	pg_as "$pg_bin/pg_ctl" -D "$pg_data" -m immediate stop \
		>/dev/null 2>&1 || true
	rm -rf "$pg_dir"
	pg_dir=
}

pg_postmaster_pid() {
	head -n 1 "$pg_data/postmaster.pid"
}

# pgbench ARGS...: against the cluster's postgres database.
pg_bench() {
	pg_as "$pg_bin/pgbench" -h "$pg_dir" -p "$pg_port" -U postgres "$@" \
		postgres
}

pg_sql() {
	pg_as "$pg_bin/psql" -h "$pg_dir" -p "$pg_port" -U postgres -XAtq \
		-c "$1" postgres
}

# MariaDB for the tests and benchmarks: a server of its own, its data
# directory made by mariadb-install-db in a temporary directory, reading
# no option file (--no-defaults), listening only on a Unix socket there.
# Source it after lib.sh (or bench/lib.sh) and call my_start; it stops the
# server when the shell exits. my_sysbench is the load: sysbench's
# oltp_update_index on one small table, so that every client updates
# the same hundred rows and their index.

. "$(dirname "${BASH_SOURCE[0]}")/srvlib.sh"

my_require() {
	srv_need "mariadb-server sysbench" mariadbd mariadb-install-db \
		mariadb sysbench
}

# my_client ARGS...: the mariadb client, as root over the socket.
my_client() {
	mariadb --no-defaults -S "$my_sock" -uroot "$@"
}

# my_start: a fresh server in $my_dir, started and answering, with an
# empty database sbtest.
my_start() {
	local _
	my_require
	my_dir=$(mktemp -d /tmp/locktop-my.XXXXXX)
	srv_on_exit my_stop
	my_sock=$my_dir/mysqld.sock
	mariadb-install-db --no-defaults --datadir="$my_dir/data" --user=root \
		--auth-root-authentication-method=normal --skip-test-db \
		>"$my_dir/install.log" 2>&1 ||
		{ cat "$my_dir/install.log" >&2; fail "mariadb-install-db failed"; }
	# A small buffer pool and no flush at each commit: quick to start,
	# and the clients wait on the server's locks rather than the disk.
	mariadbd --no-defaults --datadir="$my_dir/data" --socket="$my_sock" \
		--skip-networking --user=root --pid-file="$my_dir/mariadbd.pid" \
		--log-error="$my_dir/error.log" --tmpdir="$my_dir" \
		--innodb-buffer-pool-size=64M --innodb-log-file-size=32M \
		--innodb-flush-log-at-trx-commit=0 --performance-schema=OFF \
		--skip-name-resolve --max-connections=200 \
		>"$my_dir/mariadbd.log" 2>&1 &
	my_pid=$!
	for _ in $(seq 300); do
		[ -S "$my_sock" ] && my_client -e 'select 1' >/dev/null 2>&1 && break
		kill -0 "$my_pid" 2>/dev/null ||
			{ cat "$my_dir/error.log" >&2; fail "mariadbd ended"; }
		sleep 0.1
	done
	my_client -e 'create database sbtest' 2>"$my_dir/client.log" ||
		{ cat "$my_dir/client.log" "$my_dir/error.log" >&2
		  fail "mariadbd does not answer"; }
}

my_stop() {
	[ -n "${my_dir:-}" ] || return 0
	[ -z "${my_pid:-}" ] || srv_kill "$my_pid" 20
	srv_rmdir "$my_dir"
	my_dir= my_pid=
}

my_pid() {
	echo "$my_pid"
}

# my_sysbench prepare | run THREADS SECONDS: sysbench's oltp_update_index
# on one table of 100 rows; prepare makes it. Run leaves sysbench's
# output in $my_dir/sysbench.log and sets my_tps and my_transactions.
my_sysbench() {
	local step=$1 line
	shift
	set -- oltp_update_index --db-driver=mysql --mysql-socket="$my_sock" \
		--mysql-user=root --mysql-db=sbtest --tables=1 --table-size=100 \
		${1:+--threads="$1"} ${2:+--time="$2"} "$step"
	sysbench "$@" >"$my_dir/sysbench.log" 2>&1 ||
		{ cat "$my_dir/sysbench.log" >&2; fail "sysbench $step failed"; }
	[ "$step" = run ] || return 0
	# "    transactions:                        172305 (34422.07 per sec.)"
	line=$(grep -E '^ +transactions: ' "$my_dir/sysbench.log") ||
		fail "no transactions in sysbench's output"
	my_transactions=$(awk '{ print $2 }' <<<"$line")
	my_tps=$(sed -E 's/.*\(([0-9.]+) per sec\.\).*/\1/' <<<"$line")
}

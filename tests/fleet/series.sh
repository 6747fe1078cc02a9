#!/usr/bin/env bash
# locktop --series against a real redis-server and pmproxy, both private,
# loaded (pmseries --load) with an archive of one host's lock counters
# that mkseries.py writes as pmlogger would: every lock's row has its
# true kind (fcntl, futex, a spin loop's spin, ofd), host and figures,
# a lock that appeared in the window included. No probes are loaded.
# Usage: series.sh LOCKTOP MKSERIES
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hosts.sh"
locktop=$(realpath "$1")
mkseries=$(realpath "$2")
load_pcp_env
command -v redis-server >/dev/null || skip "redis-server is not installed"
command -v pmseries >/dev/null || skip "pmseries is not installed"
/usr/bin/python3 -c 'from pcp import pmi' 2>/dev/null ||
	skip "python3-pcp is not installed"
trap fleet_cleanup EXIT
rport=26392 pport=24435

series_start "$rport" "$pport" false

/usr/bin/python3 "$mkseries" "$tmpdir/a" series-a || fail "mkseries.py"
for i in $(seq 40); do
	pmseries -p "$rport" --load "{source.path: \"$tmpdir/a\"}" \
		>"$tmpdir/load" 2>&1 && break
	sleep 0.25
done
pmseries -p "$rport" locktop.lock.wait.time | grep -q . ||
	fail "pmseries loaded nothing: $(cat "$tmpdir/load")"
for i in $(seq 40); do
	"$locktop" --series "127.0.0.1:$pport" --window 5m -b --json \
		>"$tmpdir/series.json" 2>"$tmpdir/series.err" && break
	sleep 0.25
done
[ -s "$tmpdir/series.json" ] ||
	fail "locktop --series: $(cat "$tmpdir/series.err") $(tail -n 3 "$tmpdir/proxy/pmproxy.log")"
fin=$(tail -n 1 "$tmpdir/series.json")
jq -c '[.hosts[].name, (.locks[] | [.host, .name, .kind, .waits, .wait_ns])]' <<<"$fin"

# want NAME KIND WAITS WAIT_NS: the row of NAME, as mkseries.py wrote it
# (the counters' growth over the window's samples).
want() {
	jq -e --arg n "$1" --arg k "$2" --argjson w "$3" --argjson t "$4" '
		[.locks[] | select(.name == $n)] | length == 1 and
		(.[0] | .host == "series-a" and .kind == $k and .waits == $w and
			.wait_ns == $t and (.key | endswith("@series-a")))' \
		<<<"$fin" >/dev/null ||
		fail "$1: want $2, $3 waits, $4 ns: $(jq -c --arg n "$1" \
			'[.locks[] | select(.name == $n)]' <<<"$fin")"
}
jq -e '.hosts | length == 1 and .[0].name == "series-a"' <<<"$fin" \
	>/dev/null || fail "hosts: $(jq -c .hosts <<<"$fin")"
want /srv/db/table.tdb:4096 fcntl 570 57000000
want "[heap]+0x2a0" futex 380 38000000
# Born in the window: its first value is growth too.
want "spin_site libspin.so+0x1234" spin 150 15000000
want /srv/db/table.tdb:8192 ofd 95 9500000
echo "ok: every lock's kind, host and figures through --series"

# Batch text: the HOST column, and the kinds.
"$locktop" --series "127.0.0.1:$pport" --window 5m -b >"$tmpdir/series.txt" \
	2>"$tmpdir/series.err" || fail "batch text: $(cat "$tmpdir/series.err")"
cat "$tmpdir/series.txt"
grep -q '^HOST  *LOCK  *KIND ' "$tmpdir/series.txt" ||
	fail "no HOST column in batch text"
grep -qE '^series-a +spin_site libspin.so\+0x1234 +spin ' "$tmpdir/series.txt" ||
	fail "no spin row of series-a in batch text"
# A series keeps no longest wait and names no process: "-", not 0.
grep -qE '^series-a +/srv/db/table.tdb:4096 +fcntl +570 +57(\.0)?ms +100(\.0)?us +- +-$' \
	"$tmpdir/series.txt" ||
	fail "MAX and PROCESS of a series row are not -: $(grep table.tdb:4096 "$tmpdir/series.txt")"
echo PASS

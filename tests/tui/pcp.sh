#!/usr/bin/env bash
# The PCP sources: an archive with pmdalocktop's metric names replays
# into the same figures, one without them says so, and a pmcd without
# the agent gets a clear message (or, with the agent, real figures).
. "$(dirname "$0")/../lib.sh"
locktop=$1 mkarchive=$2

py=/usr/bin/python3
$py -c 'from pcp import pmi' 2>/dev/null || skip "python3-pcp is not installed"

# Two locks: the mutex 100 waits and 50 ms a second, the fcntl lock 10
# waits and 200 ms; six samples a second apart.
$py "$mkarchive" "$tmpdir/a" 6
"$locktop" --archive "$tmpdir/a" --batch --json -d 1 >"$tmpdir/a.json" ||
	fail "replay failed"
[ "$(wc -l <"$tmpdir/a.json")" = 6 ] ||
	fail "want 5 intervals and a final line: $(cat "$tmpdir/a.json")"
jq -e -s '[.[] | select(.final != true)] | length == 5 and
	all(.interval_s == 1 and
	    (.locks[] | select(.name == "/srv/db/table.tdb+0x1040") |
	     .waits == 100 and .wait_ns == 50000000 and .kind == "futex" and
	     .contended == 90 and .trylock_failures == 5 and
	     .hold_ns == 70000000 and .waiters_now == 2 and
	     .holder.pid == 4242 and .max_wait_ns == 3000000) and
	    (.locks[0].name == "/srv/db/table.tdb+0x1000") and
	    (.locks[0].kind == "fcntl") and
	    .kinds.fcntl.waits == 10 and .kinds.futex.wait_ns == 50000000)' \
	"$tmpdir/a.json" >/dev/null || fail "interval figures: $(head -1 "$tmpdir/a.json")"
final=$(tail -n 1 "$tmpdir/a.json")
jq -e '.final and .elapsed_s == 5 and
	(.locks[] | select(.name == "/srv/db/table.tdb+0x1040") |
	 .waits == 500 and .wait_ns == 250000000)' <<<"$final" >/dev/null ||
	fail "final figures: $final"
echo "ok: archive replay"

# A lock site's processes, as the agent counted them.
jq -e '[.locks[] | select(.name == "/srv/db/table.tdb+0x1040") | .procs] ==
	[3] and [.locks[] | select(.name == "/srv/db/table.tdb+0x1000") |
	.procs] == [1]' <<<"$final" >/dev/null ||
	fail "site processes: $(jq -c '[.locks[] | {name, procs}]' <<<"$final")"
echo "ok: a lock site's processes from locktop.lock.site_procs"

# Holders and waiters: the mutex's from their numbers, exact; the fcntl
# lock's from the text of an agent without them.
jq -e -s '[.[] | select(.final != true)] | all(
	    (.locks[] | select(.name == "/srv/db/table.tdb+0x1040") |
	     .holders == [{"pid": 4242, "comm": "writer", "count": 7,
			   "ns": 812345678, "tid": 0, "thread": ""}] and
	     .waiters == [{"pid": 5001, "comm": "reader", "count": 60,
			   "ns": 30000001},
			  {"pid": 5002, "comm": "scan", "count": 40,
			   "ns": 20000002}]) and
	    (.locks[] | select(.name == "/srv/db/table.tdb+0x1000") |
	     .holders == [{"pid": 77, "comm": "lockd", "count": 3,
			   "ns": 2500000, "tid": 0, "thread": ""}] and
	     .waiters == [{"pid": 81, "comm": "worker a", "count": 9,
			   "ns": 150000000},
			  {"pid": 82, "comm": "w", "count": 1, "ns": 50000}]))' \
	"$tmpdir/a.json" >/dev/null ||
	fail "holders and waiters: $(jq -c '.locks[] | {name, holders, waiters}' "$tmpdir/a.json" | head -2)"
echo "ok: holders and waiters, in numbers and from text"

# Text of the same archive
"$locktop" --archive "$tmpdir/a" -b -d 2 >"$tmpdir/a.txt" || fail "text replay"
grep -q '^locktop summary' "$tmpdir/a.txt" || fail "no summary: $(cat "$tmpdir/a.txt")"
grep -qE '^/srv/db/table\.tdb\+0x1000 +fcntl +20 ' "$tmpdir/a.txt" ||
	fail "2-second step: $(cat "$tmpdir/a.txt")"
# The site's label, cut to the column's 36 characters from the left,
# its process count whole.
grep -qF '../db/table.tdb+0x1040 (3 processes) ' "$tmpdir/a.txt" ||
	fail "no site label: $(cat "$tmpdir/a.txt")"
echo "ok: archive as text, 2 s steps"

# An archive without the agent's metrics
$py - "$tmpdir/other" <<'PY'
import sys
from pcp import pmi
from cpmapi import PM_TYPE_U32, PM_SEM_INSTANT, PM_INDOM_NULL
log = pmi.pmiLogImport(sys.argv[1])
log.pmiAddMetric("sample.thing", log.pmiID(29, 0, 1), PM_TYPE_U32,
                 PM_INDOM_NULL, PM_SEM_INSTANT, log.pmiUnits(0, 0, 0, 0, 0, 0))
for i in range(2):
    log.pmiPutValue("sample.thing", "", str(i))
    log.pmiWrite(1767225600 + i, 0)
log.pmiEnd()
PY
st=0
"$locktop" --archive "$tmpdir/other" -b 2>"$tmpdir/err" || st=$?
[ "$st" = 1 ] || fail "archive without metrics: exit $st"
grep -q "has no locktop metrics: it was recorded without pmdalocktop" "$tmpdir/err" ||
	fail "archive without metrics: $(cat "$tmpdir/err")"
echo "ok: archive without locktop metrics"

# The local pmcd
command -v pminfo >/dev/null || skip "pminfo is not installed"
pminfo -h localhost -f pmcd.version >/dev/null 2>&1 ||
	skip "no pmcd on localhost (/etc/init.d/pmcd start)"
if pminfo -h localhost -f locktop.lock.wait.count 2>/dev/null | grep -q 'inst\|value'; then
	"$locktop" --host localhost -b --json -n 2 -d 0.5 >"$tmpdir/h.json" ||
		fail "--host localhost with the agent failed"
	jq -e -s 'length == 3 and all(has("locks") and has("kinds"))' \
		"$tmpdir/h.json" >/dev/null || fail "host JSON: $(cat "$tmpdir/h.json")"
	echo "ok: pmcd with pmdalocktop"
else
	st=0
	"$locktop" --host localhost -b -n 1 2>"$tmpdir/err" || st=$?
	[ "$st" = 1 ] || fail "pmcd without the agent: exit $st"
	grep -q "host localhost has no locktop metrics: install pmdalocktop" "$tmpdir/err" ||
		fail "pmcd without the agent: $(cat "$tmpdir/err")"
	echo "ok: pmcd without pmdalocktop: $(cat "$tmpdir/err")"
fi
echo PASS

#!/usr/bin/env bash
# The figures the PCP source once left at 0 (a spin lock's samples and
# yields, a file lock's deadlocks) come through an archive of the
# agent's metrics, per interval and in the totals.
# Usage: pcp-figures.sh LOCKTOP MKFIGURES PMNS
. "$(dirname "$0")/../lib.sh"
locktop=$1 mkfigures=$2 pmns=$3

py=/usr/bin/python3
$py -c 'from pcp import pmi' 2>/dev/null || skip "python3-pcp is not installed"

# Four samples a second apart: three intervals.
$py "$mkfigures" "$tmpdir/a" "$pmns" 4 || fail "no archive"
"$locktop" --archive "$tmpdir/a" --batch --json -d 1 >"$tmpdir/a.json" ||
	fail "replay failed"
jq -e -s '[.[] | select(.final != true)] | length == 3 and all(
	    (.locks[] | select(.name == "spinner+0x4010") |
	     .kind == "spin" and .samples == 997 and .yields == 50 and
	     .deadlocks == 0) and
	    (.locks[] | select(.name == "/srv/dl.dat+0x0") |
	     .kind == "fcntl" and .deadlocks == 1 and .waits == 2))' \
	"$tmpdir/a.json" >/dev/null ||
	fail "interval figures: $(head -1 "$tmpdir/a.json")"
echo "ok: samples, yields and deadlocks per interval"
jq -e '.final and
	(.locks[] | select(.name == "spinner+0x4010") |
	 .samples == 2991 and .yields == 150) and
	(.locks[] | select(.name == "/srv/dl.dat+0x0") | .deadlocks == 3)' \
	<<<"$(tail -n 1 "$tmpdir/a.json")" >/dev/null ||
	fail "final figures: $(tail -n 1 "$tmpdir/a.json")"
echo "ok: and in the totals"
echo PASS

#!/usr/bin/env bash
# A long run keeps reading new files: three sets of them, more in all
# than the kernel's per-file map holds. Once it is a quarter full, the slots
# of files idle for the --retire time go back, so none of the later
# files is dropped; every file keeps its row, and a file read again after
# its slot went back adds to its figures exactly what happened.
. "$(dirname "$0")/lib.sh"
locktop=$1 preadfiles=$2
require_bpf

n=2500
mkdir "$tmpdir/files"
"$locktop" --batch --json --delay 0.3 --retire 1 --limit 0 \
	--output "$tmpdir/lt.json" -- bash -c "
	for first in 0 $n $((2 * n)) 0; do
		\"$preadfiles\" \"$tmpdir/files\" \$first $n >/dev/null || exit 1
		sleep 3.5
	done" || fail "locktop or preadfiles failed"
final=$(tail -n 1 "$tmpdir/lt.json")
drops=$(jq .drops <<<"$final")
mine='[.files[] | select(.name | test("(^|/)f[0-9]+$"))]'
rows=$(jq "$mine | length" <<<"$final")
twice=$(jq "$mine | map(select(.reads == 2 and .read_bytes == 2)) | length" <<<"$final")
once=$(jq "$mine | map(select(.reads == 1 and .read_bytes == 1)) | length" <<<"$final")
most=$(jq -s 'map(.file_entries) | max' "$tmpdir/lt.json")
cap=$(jq .file_capacity <<<"$final")
echo "rows $rows: $once read once, $twice twice; drops $drops; kernel entries at most $most of $cap"
[ "$drops" -eq 0 ] || fail "$drops events dropped"
[ "$((3 * n))" -gt "$cap" ] || fail "the files fit the map: nothing was tested"
[ "$rows" -eq $((3 * n)) ] || fail "$rows rows, not $((3 * n))"
[ "$twice" -eq "$n" ] || fail "$twice files read twice show 2 reads, not $n"
[ "$once" -eq $((2 * n)) ] || fail "$once files read once show 1 read, not $((2 * n))"
[ "$most" -lt "$cap" ] || fail "the map filled up"
# A file's row keeps its name through its slot going back.
jq -e "$mine | map(select(.name | endswith(\"/f0\") or . == \"f0\")) | .[0].reads == 2" \
	<<<"$final" >/dev/null || fail "f0 lost its name or its figures"
echo PASS

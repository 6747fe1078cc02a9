#!/usr/bin/env bash
# A run that never stops meeting new locks and files stays bounded. The
# rows of locks and files whose kernel slots went back (idle for the
# --retire time) are kept for when they come back, but only up to twice
# as many as the kernel's maps hold; past that the longest idle go, so
# seven sets of byte-range locks and seven sets of files, each set idle
# once the next starts, leave the first sets' rows behind while every
# row of the last set keeps exactly its figures, and nothing is dropped.
. "$(dirname "$0")/lib.sh"
locktop=$1 ranges=$2 preadfiles=$3
require_bpf

n=7000 m=2500 sets=7
mkdir "$tmpdir/files"
"$locktop" --batch --json --delay 0.3 --retire 1 --limit 0 \
	--output "$tmpdir/lt.json" -- bash -c "
	for k in \$(seq 0 $((sets - 1))); do
		\"$ranges\" \"$tmpdir/file\" \$((k * $n)) $n >/dev/null || exit 1
		\"$preadfiles\" \"$tmpdir/files\" \$((k * $m)) $m >/dev/null || exit 1
		sleep 2.5
	done" || fail "locktop, ranges or preadfiles failed"
final=$(tail -n 1 "$tmpdir/lt.json")
drops=$(jq .drops <<<"$final")
cap=$(jq .lock_capacity <<<"$final")
fcap=$(jq .file_capacity <<<"$final")
locks='[.locks[] | select(.kind == "fcntl" and (.name | test("(^|/)file\\+0x[0-9a-f]+$"))) |
	.byte = (.name | capture("\\+(?<b>0x[0-9a-f]+)$").b | '"$jq_hex"')]'
files='[.files[] | select(.name | test("(^|/)f[0-9]+$")) |
	.nr = (.name | capture("f(?<b>[0-9]+)$").b | tonumber)]'
rows=$(jq "$locks | length" <<<"$final")
first=$(jq "$locks | map(select(.byte < $n)) | length" <<<"$final")
last=$(jq "$locks | map(select(.byte >= $(((sets - 1) * n)) and .trylock_failures == 1)) | length" <<<"$final")
frows=$(jq "$files | length" <<<"$final")
ffirst=$(jq "$files | map(select(.nr < $m)) | length" <<<"$final")
flast=$(jq "$files | map(select(.nr >= $(((sets - 1) * m)) and .reads == 1)) | length" <<<"$final")
echo "locks: $rows rows of $((sets * n)) (map $cap), $first of the first set, $last of the last"
echo "files: $frows rows of $((sets * m)) (map $fcap), $ffirst of the first set, $flast of the last"
echo "drops $drops"
[ "$drops" -eq 0 ] || fail "$drops events dropped"
[ "$((sets * n - n))" -gt "$((2 * cap))" ] || fail "the locks fit the bound: nothing was tested"
[ "$((sets * m - m))" -gt "$((2 * fcap))" ] || fail "the files fit the bound: nothing was tested"
[ "$rows" -le "$((2 * cap + n))" ] || fail "$rows lock rows: not bounded"
[ "$frows" -le "$((2 * fcap + m))" ] || fail "$frows file rows: not bounded"
[ "$first" -eq 0 ] || fail "$first locks of the first set kept: not the longest idle that went"
[ "$ffirst" -eq 0 ] || fail "$ffirst files of the first set kept: not the longest idle that went"
[ "$last" -eq "$n" ] || fail "$last locks of the last set show their one refusal, not $n"
[ "$flast" -eq "$m" ] || fail "$flast files of the last set show their one read, not $m"
echo PASS

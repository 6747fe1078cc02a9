#!/usr/bin/env bash
# lockbench compare: a small sweep writes CSV, Markdown, SVG and PNG.
. "$(dirname "$0")/common.sh"

command -v gnuplot >/dev/null || fail "gnuplot is not installed"
out=$tmpdir/cmp
"$lb" compare --out "$out" --locks mutex,flock --procs 1,3 -l 200 -H 16 \
	2>"$tmpdir/progress" || fail "compare exited $?: $(cat "$tmpdir/progress")"

grep -q '^\[ 1/4\] flock' "$tmpdir/progress" || fail "no progress on stderr"
grep -q '^\[ 4/4\] mutex' "$tmpdir/progress" || fail "progress does not reach 4/4"

csv=$out/compare.csv
head -n 1 "$csv" | grep -q '^lock,io,procs,threads,loops,hash,status,elapsed_s,ops,ops_per_s,user_s,sys_s,' ||
	fail "CSV header: $(head -n 1 "$csv")"
[ "$(wc -l <"$csv")" -eq 5 ] || fail "CSV wants 4 rows: $(cat "$csv")"
awk -F, 'NR > 1 && ($7 != "ok" || $9 != $3 * 200 || $10 <= 0) { bad = 1 }
	END { exit bad }' "$csv" || fail "CSV rows are wrong: $(cat "$csv")"
grep -q '^| procs | flock | mutex |$' "$out/compare.md" ||
	fail "Markdown table header: $(cat "$out/compare.md")"
grep -q '^| 3 | [0-9]* | [0-9]* |$' "$out/compare.md" || fail "Markdown rows"
grep -q '<svg' "$out/compare.svg" || fail "no SVG"
grep -q 'throughput' "$out/compare.svg" || fail "SVG lacks the throughput panel"
[ "$(head -c 8 "$out/compare.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "compare.png is not a PNG"
[ -z "$(ls "$tmpdir"/lockbench-*.tdb 2>/dev/null)" ] || fail "compare left table files behind"
echo ok

#!/usr/bin/env bash
# A record keeps the traced command's CPU time (its own and that of the
# children it waited for); one without a command has none. locktop diff
# and workloads/compare-locks open with the elapsed time and the CPU
# time, before → after.
. "$(dirname "$0")/../lib.sh"
locktop=$(realpath "$1") lockbench=$(realpath "$2") compare=$(realpath "$3")
require_bpf
cd "$tmpdir"

# A busy loop in a grandchild: the shell waits for it, so its CPU time
# is the command's.
busy='sh -c '\''i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'\''; :'
"$locktop" record -o busy.rec --interval 0.1 -- sh -c "$busy" 2>err.txt ||
	fail "record -- sh: exit $? $(cat err.txt)"
jq -e --argjson cores "$(nproc)" '.exit_status == 0 and
	(.cpu_user_s | type == "number") and (.cpu_sys_s | type == "number") and
	.cpu_user_s + .cpu_sys_s > 0.02 and
	.cpu_user_s + .cpu_sys_s <= .final.elapsed_s * $cores + 0.05' \
	busy.rec >/dev/null ||
	fail "busy.rec: $(jq -c '{cpu_user_s, cpu_sys_s, e: .final.elapsed_s}' busy.rec)"
echo "ok: the command's CPU time, $(jq -c '[.cpu_user_s, .cpu_sys_s]' busy.rec)"

# Without a command there is no command's CPU time to keep.
"$locktop" record -o all.rec --duration 0.3 --interval 0.1 2>err.txt ||
	fail "record --duration: exit $? $(cat err.txt)"
jq -e 'has("cpu_user_s") and .cpu_user_s == null and .cpu_sys_s == null' \
	all.rec >/dev/null || fail "all.rec: $(jq -c 'del(.intervals, .final)' all.rec)"
echo "ok: none without a command"

# The diff opens with them.
"$locktop" diff busy.rec busy.rec >diff.txt || fail "diff exited $?"
sed -n 1p diff.txt | grep -qE '^elapsed +[0-9.]+m?s → [0-9.]+m?s +\+0\.0%$' ||
	fail "line 1: $(head -3 diff.txt)"
sed -n 2p diff.txt | grep -qE '^CPU user\+sys +[0-9.]+m?s → [0-9.]+m?s +\+0\.0%  user ' ||
	fail "line 2: $(head -3 diff.txt)"
"$locktop" diff all.rec busy.rec >diff.txt || fail "diff exited $?"
sed -n 2p diff.txt | grep -qE '^CPU user\+sys +\? → [0-9.]+m?s +\?$' ||
	fail "no CPU before: $(head -3 diff.txt)"
echo "ok: diff opens with elapsed and CPU"

# compare-locks: its summary and its report open with them too.
LOCKTOP=$locktop LOCKBENCH=$lockbench "$compare" -o cmp --interval 0.02 \
	--common '-n 4 -l 500 -H 8' >summary.txt 2>err.txt ||
	fail "compare-locks exited $?: $(cat err.txt)"
sed -n 1p summary.txt | grep -q '^elapsed ' || fail "summary: $(head -3 summary.txt)"
sed -n 2p summary.txt | grep -qE '^CPU user\+sys +[0-9.]+m?s → [0-9.]+m?s ' ||
	fail "summary: $(head -3 summary.txt)"
grep -q '^KINDS ' summary.txt || fail "summary has no kinds: $(cat summary.txt)"
sed -n 3,5p cmp/report.md | tr '\n' '~' |
	grep -q '^| run | before | after | change |~| --- | ---: | ---: | ---: |~| elapsed | ' ||
	fail "report.md: $(head -8 cmp/report.md)"
sed -n 6p cmp/report.md | grep -q '^| CPU user+sys | [0-9.]*m\{0,1\}s | ' ||
	fail "report.md: $(head -8 cmp/report.md)"
[ "$(grep -c '^| run | before | after | change |$' cmp/report.md)" -eq 1 ] ||
	fail "report.md has the run table twice"
echo "ok: compare-locks opens with elapsed and CPU"

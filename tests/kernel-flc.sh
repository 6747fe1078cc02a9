#!/usr/bin/env bash
# Kernel locks: 32 processes taking fcntl locks on one table contend on
# its file lock context's spinlock, which shows as "flc_lock of" the
# table, a spinlock; no program is left once locktop exits.
# Usage: kernel-flc.sh LOCKTOP LOCKBENCH
. "$(dirname "$0")/lib.sh"
locktop=$1 lockbench=$2
require_bpf

"$locktop" --batch --json --delay 1 --output "$tmpdir/lt.json" -- \
	"$lockbench" --lock fcntl -n 32 -l 2000 -H 16 --hold-us 20 \
	--path "$tmpdir/table.tdb" --json >"$tmpdir/lb.json" ||
	fail "lockbench under locktop failed"
gone
final=$(tail -n 1 "$tmpdir/lt.json")
# The table's path while a process that locked it still has it open,
# else its base name, as file locks are named.
want="^flc_lock of ($tmpdir/)?table\\.tdb\$"
lock=$(jq -c --arg re "$want" '[.locks[] | select(.kind == "kernel" and
	(.name | test($re)))] | first // empty' <<<"$final")
[ -n "$lock" ] || fail "no flc_lock of the table: $(jq -c \
	'[.locks[] | select(.kind == "kernel") | .name]' <<<"$final")"
echo "lock: $(jq -c '{name, kernel_type, caller, address, waits, wait_ns}' \
	<<<"$lock")"
[ "$(jq -r .kernel_type <<<"$lock")" = spinlock ] ||
	fail "flc_lock is not a spinlock: $(jq -r .kernel_type <<<"$lock")"
[ "$(jq .waits <<<"$lock")" -gt 0 ] || fail "flc_lock without waits"
# Across runs a file is its base name, whatever the name shows.
[ "$(jq -r .key <<<"$lock")" = "kernel:flc_lock of table.tdb" ] ||
	fail "key: $(jq -r .key <<<"$lock")"

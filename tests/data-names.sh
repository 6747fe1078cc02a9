#!/usr/bin/env bash
# A program's own lock, in its .bss past the file's last page (the
# anonymous mapping that continues the image), is named by the symbol
# that covers it, demangled for C++; in a binary stripped of its symbol
# table, by the binary and the address its ELF file gives the lock
# (nm's), computed here from the unstripped twin. The lock's waits agree
# within 1% with a bpftrace count of the same futex calls in the same
# run (tests/futex-truth.bt).
# Usage: data-names.sh LOCKTOP MODE PROGRAM [UNSTRIPPED]
#   MODE: cxx (cxxlock), bss (bsslock), stripped (bsslock-stripped)
. "$(dirname "$0")/lib.sh"
locktop=$1 mode=$2 prog=$3 unstripped=${4:-$3}
require_bpf
command -v bpftrace >/dev/null || skip "bpftrace is not installed"
command -v nm >/dev/null || skip "nm (binutils) is not installed"

base=$(basename "$prog")
comm=${base:0:15}
# Where the lock lies in the image: past its file-backed part?
symbol() { nm "$unstripped" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
read -r vaddr filesz < <(readelf -lW "$unstripped" |
	awk '$1 == "LOAD" && $7 ~ /W/ { v = $3; f = $5 } END { print v, f }')
file_end=$((vaddr + filesz))
case $mode in
cxx)
	off=$(($(symbol _ZN8cxxlocks10table_lockE)))
	want="cxxlocks::table_lock ($base)"
	;;
bss | stripped)
	# bss_area is 256 KiB of ballast, then the mutex.
	off=$(($(symbol bss_area) + 0x40000))
	want="bss_area+0x40000 ($base)"
	if [ "$mode" = stripped ]; then
		want=$(printf '%s+0x%x' "$base" "$off")
		[ -z "$(nm "$prog" 2>/dev/null)" ] || fail "$prog is not stripped"
	fi
	;;
*) fail "unknown mode $mode" ;;
esac
[ "$off" -gt $(((file_end + 4095) / 4096 * 4096)) ] ||
	fail "the lock ($off) is not past the file's last page ($file_end)"

start_truth "$(dirname "$0")/futex-truth.bt" "$comm"
"$locktop" --batch --json --delay 1 --output "$tmpdir/lt.json" -- \
	"$prog" -t 4 -n 20000 -h 20 >"$tmpdir/out.json" ||
	fail "$base under locktop failed"
kill -INT "$bt"
wait "$bt" || true
gone

addr=$(jq -r .address "$tmpdir/out.json")
final=$(tail -n 1 "$tmpdir/lt.json")
row=$(jq -c --arg a "$addr" '[.locks[] | select(.address == $a)]' <<<"$final")
[ "$(jq length <<<"$row")" = 1 ] || fail "lock $addr is not one row: $row"
row=$(jq -c '.[0]' <<<"$row")
echo "row: $(jq -c '{name, key, kind, waits}' <<<"$row")"
[ "$(jq -r .kind <<<"$row")" = futex ] || fail "kind: $row"
[ "$(jq -r .name <<<"$row")" = "$want" ] || fail "name is not '$want': $row"
[ "$(jq -r .key <<<"$row")" = "futex:$want" ] || fail "key: $row"
truth=$(awk -v m="@waits[$((addr))]:" '$1 == m { print $2; f = 1 }
	END { if (!f) print 0 }' "$tmpdir/bt.out")
[ "$truth" -gt 100 ] || fail "too little contention to judge: $truth"
within waits "$(jq .waits <<<"$row")" "$truth" 1 "bpftrace"
echo PASS

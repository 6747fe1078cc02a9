#!/usr/bin/env bash
# The metrics pmdalocktop's dashboards and rules name are in its metric
# table (pmda/metrics.def): Grafana's dashboard, parsed as JSON, every
# string in it; and the pmieconf rules' predicates. A name is a metric,
# or a group of them (locktop.lock).
# Usage: dashboard.sh PMDA_SRC_DIR
. "$(dirname "$0")/../lib.sh"
src=$1

sed -n 's/^LTPM_METRIC([A-Z0-9_]*, "\(locktop\.[a-z0-9_.]*\)".*/\1/p' \
	"$src/metrics.def" | sort -u >"$tmpdir/table"
[ "$(wc -l <"$tmpdir/table")" -ge 60 ] || fail "metric table not read"
jq -r '.. | strings' "$src/locktop-grafana.json" >"$tmpdir/strings" ||
	fail "the Grafana dashboard is not JSON"
grep -o 'locktop\.[a-z0-9_.]*[a-z0-9_]' "$tmpdir/strings" | sort -u \
	>"$tmpdir/grafana"
[ -s "$tmpdir/grafana" ] || fail "the dashboard names no metric"
sed -n '/predicate/,/^"/p;/predicate/,/)"$/p' "$src"/pmieconf/* |
	grep -o 'locktop\.[a-z0-9_.]*[a-z0-9_]' | sort -u >"$tmpdir/rules"
[ -s "$tmpdir/rules" ] || fail "the rules name no metric"
bad=0
while read -r m; do
	grep -qxF "$m" "$tmpdir/table" && continue
	grep -q "^$m\." "$tmpdir/table" && continue
	echo "not in the metric table: $m" >&2
	bad=1
done < <(sort -u "$tmpdir/grafana" "$tmpdir/rules")
[ "$bad" = 0 ] || fail "names not in pmda/metrics.def"
echo "ok: $(wc -l <"$tmpdir/grafana") names in the dashboard," \
	"$(wc -l <"$tmpdir/rules") in the rules, all in the table"
echo PASS

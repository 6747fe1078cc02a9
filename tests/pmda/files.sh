#!/usr/bin/env bash
# pmda/pmns and pmda/help, which the agent's tests install it from, are
# the files genfiles writes from the metric table (pmda/metrics.def).
# Usage: files.sh GENERATED_PMNS GENERATED_HELP PMNS HELP
. "$(dirname "$0")/../lib.sh"

status=0
same() {
	if ! diff -u "$2" "$1"; then
		echo "FAIL: $2 is not what genfiles writes from pmda/metrics.def;" \
			"if the table is right: cp $1 $2" >&2
		status=1
	fi
}
same "$1" "$3"
same "$2" "$4"
exit $status

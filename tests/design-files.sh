#!/usr/bin/env bash
# docs/design.md's file lists against the source tree: every C source,
# header and table (.def) in collector/, probes/, tui/, record/ and pmda/
# has a line of its own, its path and its purpose, in one of design.md's
# fenced lists; every path those lists name exists. No BPF, no root.
set -eu
root=${1:-$(dirname "$0")/..}
doc=$root/docs/design.md
dirs='collector|probes|tui|record|pmda'
bad=0

[ -r "$doc" ] || { echo "FAIL: cannot read $doc" >&2; exit 1; }

# The lists: lines inside fenced blocks that begin with DIR/FILE and go
# on with the file's purpose.
listed=$(awk -v dirs="$dirs" '
	/^```/ { fence = !fence; next }
	fence && $1 ~ ("^(" dirs ")/[^/ ]+\\.(c|h|def)$") {
		if (NF < 2)
			printf "FAIL: docs/design.md:%d lists %s with no purpose\n", NR, $1 > "/dev/stderr"
		else
			print $1
	}' "$doc" | sort)

# The tree: each directory's own files, as the build takes them.
present=$(cd "$root" && for d in ${dirs//|/ }; do
	find "$d" -maxdepth 1 -type f \
		\( -name '*.c' -o -name '*.h' -o -name '*.def' \)
done | sort)

while read -r f; do
	[ -n "$f" ] || continue
	echo "FAIL: docs/design.md does not list $f" >&2
	bad=1
done < <(comm -23 <(echo "$present") <(echo "$listed" | sort -u))

while read -r f; do
	[ -n "$f" ] || continue
	echo "FAIL: docs/design.md lists $f, which does not exist" >&2
	bad=1
done < <(comm -13 <(echo "$present") <(echo "$listed" | sort -u))

while read -r f; do
	[ -n "$f" ] || continue
	echo "FAIL: docs/design.md lists $f more than once" >&2
	bad=1
done < <(echo "$listed" | uniq -d)

[ "$bad" = 0 ] || exit 1
echo "ok: docs/design.md lists all $(echo "$present" | wc -l) files of" \
	"${dirs//|/, }"

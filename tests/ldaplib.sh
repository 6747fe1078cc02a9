# OpenLDAP's slapd for the tests and benchmarks: a server of its own,
# with a slapd.conf and one mdb database (LMDB) in a temporary directory,
# listening on 127.0.0.1 only on a port of its own and on an ldapi://
# socket there, seeded with a few entries. Source it after lib.sh (or
# bench/lib.sh) and call ldap_start; it stops the server when the shell
# exits. ldap_load is the load: writers with ldapmodify (LMDB lets one
# write transaction in at a time: its writer mutex lives in lock.mdb)
# and readers with ldapsearch.

. "$(dirname "${BASH_SOURCE[0]}")/srvlib.sh"

ldap_modules=${LDAP_MODULES:-/usr/lib/ldap}
ldap_suffix=dc=locktop,dc=test
ldap_rootdn=cn=admin,$ldap_suffix
ldap_pw=locktop-$$
ldap_entries=100

ldap_require() {
	srv_need "slapd ldap-utils" slapd ldapadd ldapmodify ldapsearch
	[ -e "$ldap_modules/back_mdb.so" ] ||
		skip "no back_mdb module in $ldap_modules (Debian: slapd)"
}

# ldap_start [PORT]: a fresh server in $ldap_dir, started and seeded
# with $ldap_entries people under ou=people.
ldap_start() {
	local i
	ldap_require
	ldap_port=${1:-$(srv_port)}
	ldap_dir=$(mktemp -d /tmp/locktop-ldap.XXXXXX)
	srv_on_exit ldap_stop
	mkdir "$ldap_dir/db"
	ldap_url=ldap://127.0.0.1:$ldap_port/
	cat >"$ldap_dir/slapd.conf" <<EOF
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile $ldap_dir/slapd.pid
argsfile $ldap_dir/slapd.args
modulepath $ldap_modules
moduleload back_mdb
threads 16
database mdb
maxsize 268435456
suffix "$ldap_suffix"
rootdn "$ldap_rootdn"
rootpw $ldap_pw
directory $ldap_dir/db
index objectClass eq
index uid eq
EOF
	# -d 0: in the foreground, logging nothing.
	slapd -d 0 -f "$ldap_dir/slapd.conf" \
		-h "$ldap_url ldapi://${ldap_dir//\//%2F}%2Fldapi/" \
		>"$ldap_dir/slapd.log" 2>&1 &
	ldap_pid=$!
	srv_wait_port "$ldap_port" "$ldap_pid" 30 ||
		{ cat "$ldap_dir/slapd.log" >&2; fail "slapd did not start"; }
	{
		printf 'dn: %s\nobjectClass: dcObject\nobjectClass: organization\n' \
			"$ldap_suffix"
		printf 'dc: locktop\no: locktop\n\n'
		printf 'dn: ou=people,%s\nobjectClass: organizationalUnit\n' \
			"$ldap_suffix"
		printf 'ou: people\n\n'
		for i in $(seq "$ldap_entries"); do
			printf 'dn: uid=u%d,ou=people,%s\nobjectClass: inetOrgPerson\n' \
				"$i" "$ldap_suffix"
			printf 'uid: u%d\ncn: User %d\nsn: U%d\ndescription: 0\n\n' \
				"$i" "$i" "$i"
		done
	} >"$ldap_dir/seed.ldif"
	ldap_as ldapadd -f "$ldap_dir/seed.ldif" >"$ldap_dir/seed.log" 2>&1 ||
		{ cat "$ldap_dir/seed.log" >&2; fail "ldapadd of the seed failed"; }
}

ldap_stop() {
	[ -n "${ldap_dir:-}" ] || return 0
	[ -z "${ldap_pid:-}" ] || srv_kill "$ldap_pid" 10
	srv_rmdir "$ldap_dir"
	ldap_dir= ldap_pid=
}

ldap_pid() {
	echo "$ldap_pid"
}

# ldap_as TOOL ARGS...: an ldap-utils tool against the server, bound as
# its root DN, reading no ldap.conf of the system's.
ldap_as() {
	local tool=$1
	shift
	LDAPNOINIT=1 "$tool" -x -H "$ldap_url" -D "$ldap_rootdn" -w "$ldap_pw" "$@"
}

# ldap_load WRITERS READERS SECONDS COUNT: WRITERS ldapmodify processes,
# each one connection making COUNT changes (a description of a person,
# a different person each time), and READERS ldapsearch processes, each
# one connection making COUNT searches for a person by uid; all at once,
# each stopped after SECONDS if it has not finished. Sets ldap_writes and
# ldap_reads, the operations sent in all (those of a client stopped
# early are not all done), ldap_stopped, the clients stopped early, and
# ldap_secs, the seconds from the first client's start to the last one's
# end.
ldap_load() {
	local w r i pids= p rc start
	for w in $(seq "$1"); do
		for i in $(seq "$4"); do
			printf 'dn: uid=u%d,ou=people,%s\nchangetype: modify\n' \
				$(((i * 7 + w) % ldap_entries + 1)) "$ldap_suffix"
			printf 'replace: description\ndescription: %d-%d\n\n' "$w" "$i"
		done >"$ldap_dir/w$w.ldif"
	done
	for i in $(seq "$4"); do
		echo "u$(((i * 13) % ldap_entries + 1))"
	done >"$ldap_dir/uids"
	start=$(date +%s.%N)
	for w in $(seq "$1"); do
		timeout "$3" env LDAPNOINIT=1 ldapmodify -x -H "$ldap_url" \
			-D "$ldap_rootdn" -w "$ldap_pw" -f "$ldap_dir/w$w.ldif" \
			>/dev/null 2>>"$ldap_dir/load.log" &
		pids="$pids $!"
	done
	for r in $(seq "$2"); do
		timeout "$3" env LDAPNOINIT=1 ldapsearch -x -H "$ldap_url" \
			-b "ou=people,$ldap_suffix" -f "$ldap_dir/uids" '(uid=%s)' cn \
			>/dev/null 2>>"$ldap_dir/load.log" &
		pids="$pids $!"
	done
	ldap_stopped=0
	for p in $pids; do
		rc=0
		wait "$p" || rc=$?
		case $rc in
		0) ;;
		124) ldap_stopped=$((ldap_stopped + 1)) ;;
		*) cat "$ldap_dir/load.log" >&2; fail "an LDAP client failed ($rc)" ;;
		esac
	done
	ldap_secs=$(awk -v s="$start" -v e="$(date +%s.%N)" \
		'BEGIN { printf "%.3f", e - s }')
	ldap_writes=$(($1 * $4))
	ldap_reads=$(($2 * $4))
}

# Shared helpers of the integration tests.  Source it first thing:
#   . "$(dirname "$0")/lib.sh"
# It gives a scratch directory $T (removed at exit), kernel mount helpers
# that always unmount and detach, and tree comparison helpers.
set -euo pipefail

: "${EROFSKIT:?EROFSKIT must point at the erofskit binary}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MANIFEST="python3 $HERE/manifest.py"
# The upstream-made fixtures (tests/fixtures/README.md): the build unpacks
# them into BUILD/fixtures; EROFSKIT_FIXTURES names another copy.
: "${EROFSKIT_FIXTURES:=${EROFSKIT_BUILD:-$(dirname "$EROFSKIT")}/fixtures}"
export EROFSKIT_FIXTURES
FIXTURES=$EROFSKIT_FIXTURES
if [ ! -f "$FIXTURES/manifest.json" ] || ! compgen -G "$FIXTURES/images/*.img" >/dev/null; then
	echo "FAIL: no fixtures at $FIXTURES: configure the build (cmake unpacks" \
		"tests/fixtures/images.tar.xz there) or set EROFSKIT_FIXTURES" >&2
	exit 1
fi

T=$(mktemp -d /tmp/erofskit-test.XXXXXX)
# manifest.py remembers the digests of large sparse files here, keyed by
# their data (see there): once per build directory, not once per walk.
export MANIFEST_CACHE=${EROFSKIT_BUILD:-$T}/manifest-cache
_mounts=()

# python3, resolved once per test: where python3 is a version manager's
# shim (pyenv's, as on this project's CI machines) every start costs some
# 0.3 s more than the interpreter's own 0.05 s, and the suite starts
# python over a thousand times (release suite: 978 s with the shim, 640 s
# without).  A wrapper that execs the interpreter by its path (a
# virtualenv's stays one) comes first in PATH, in a directory of its own
# so that nothing a test does in $T meets it.  -S: the tests import the
# standard library only, and site's start-up (.pth files of installed
# packages) took 65 of the 90 ms of a start on CI machines.
_pybin=$(mktemp -d /tmp/erofskit-python.XXXXXX)
_python=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || _python=
if [ -n "$_python" ] && [ -x "$_python" ]; then
	printf '#!/bin/sh\nexec %q -S "$@"\n' "$_python" >"$_pybin/python3"
	chmod +x "$_pybin/python3"
	PATH=$_pybin:$PATH
	export PATH
fi

cleanup() {
	local m
	for m in "${_mounts[@]}"; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
	# Loop devices still bound to our scratch files.
	losetup -a 2>/dev/null | awk -F: -v t="$T" 'index($0, t) {print $1}' |
		while read -r dev; do losetup -d "$dev" 2>/dev/null || true; done
	rm -rf "$T" "$_pybin"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# The sanitized build runs every test, but the longest matrices take a
# representative subset there (each code path still runs): pick A in the
# normal build, B in the sanitized one.
normal_or_sanitized() {
	if [ "${EROFSKIT_SANITIZED:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}
note() { echo "-- $*"; }

# kmount IMAGE DIR: mount read-only with the kernel's EROFS.
kmount() {
	mkdir -p "$2"
	mount -t erofs -o loop,ro "$1" "$2" || fail "kernel refused to mount $1"
	_mounts+=("$2")
}

kumount() {
	umount "$1" || fail "cannot unmount $1"
	forget_mount "$1"
}

# forget_mount DIR: unmounted by the test itself, so not again at exit
# (t_layouts mounts at one place 123 times: its exit tried two umounts
# for each, 4 of its 120 s).
forget_mount() {
	local i
	for i in "${!_mounts[@]}"; do
		[ "${_mounts[$i]}" != "$1" ] || { unset "_mounts[$i]"; return 0; }
	done
}

# manifest DIR OUT: the canonical manifest of a tree.
manifest() { $MANIFEST "$1" -o "$2"; }

# differ DIFFERENCES WHAT: show the first differences, then fail.
differ() {
	echo "$1" | head -40 >&2
	fail "$2"
}

# same_manifest A B [what]: fail with the differences unless equal.
same_manifest() {
	local d
	d=$($MANIFEST --compare "$1" "$2") || differ "$d" "${3:-manifests differ}: $1 vs $2"
}

# copy_tree FROM TO: everything, sparse files staying sparse; an attribute
# that cannot be copied fails the copy.
copy_tree() {
	cp -dR --preserve=mode,ownership,timestamps,links,xattr --sparse=always "$1" "$2" ||
		fail "cannot copy $1 to $2"
}

# build_fixture_tree DIR: the tree the fixture images were made from
# (every file type, boundary sizes, a sparse 5 GiB file, a 600-entry
# directory, 255-byte names, hard links, xattrs and ACLs, odd modes,
# owners and mtimes; tests/fixtures/README.md).  $FIXTURES/manifest.json
# is its manifest.  chunked-64k is the one image that holds all of it, and
# reads back one mtime without its nanoseconds (code N in INDEX.md): the
# tree is the kernel's view of that image with that mtime put back, and
# must then match manifest.json exactly.
build_fixture_tree() {
	local mnt=$T/fixture-tree-image.$$
	[ ! -e "$1" ] || fail "build_fixture_tree: $1 already exists"
	mkdir -p "$(dirname "$1")"
	kmount "$FIXTURES/images/chunked-64k.img" "$mnt"
	copy_tree "$mnt" "$1"
	kumount "$mnt"
	touch -d @1700000000.123456789 "$1/times/nsec-1700000000.123456789"
	manifest "$1" "$T/fixture-tree.json"
	same_manifest "$FIXTURES/manifest.json" "$T/fixture-tree.json" "the fixture tree"
}

# The copy of the fixture tree that it.fixture_tree makes once per CTest
# run, and the manifest.json it was checked against.
FIXTURE_TREE=${EROFSKIT_BUILD:-$T}/fixture-tree
fixture_tree_stamp() { sha256sum <"$FIXTURES/manifest.json"; }

# make_fixture_tree DIR: a fresh fixture tree at DIR (which must not exist).
make_fixture_tree() {
	if [ -f "$FIXTURE_TREE.ok" ] && [ "$(cat "$FIXTURE_TREE.ok")" = "$(fixture_tree_stamp)" ]; then
		copy_tree "$FIXTURE_TREE" "$1"
	else
		build_fixture_tree "$1"
	fi
}

# user_erofskit: prints the path of a copy of $EROFSKIT that other users
# can run (the build tree may lie under a directory only its owner may
# enter); the copy lives in $T, which is made 0755, and goes with it.
user_erofskit() {
	chmod 0755 "$T"
	mkdir -p -m 0755 "$T/user-bin"
	install -m 0755 "$EROFSKIT" "$T/user-bin/erofskit"
	echo "$T/user-bin/erofskit"
}

# expect_exit CODE CMD...: run and require that exit status.
expect_exit() {
	local want=$1 got=0
	shift
	"$@" || got=$?
	[ "$got" -eq "$want" ] || fail "expected exit $want, got $got: $*"
}

# mkfs_refused TEXT ARGS...: `erofskit mkfs -q ARGS bad.img src`, run in
# the current directory, exits 2 with TEXT in its message and writes no
# image.
mkfs_refused() {
	local text=$1
	shift
	rm -f bad.img
	expect_exit 2 "$EROFSKIT" mkfs -q "$@" bad.img src 2>err.txt
	grep -qF -- "$text" err.txt || fail "mkfs $*: the message does not say '$text': $(cat err.txt)"
	[ ! -e bad.img ] || fail "mkfs $*: an image was written"
}

# Run CMD with every library of this machine whose ldconfig name matches
# the awk regular expression RE hidden behind an empty file (in a mount
# namespace of its own), as on a machine without it:
#   without_libs RE CMD...
without_libs() {
	local re=$1 list
	shift
	list=$(mktemp)
	ldconfig -p | awk -v re="$re" '$1 ~ re { print $NF }' >"$list"
	[ -s "$list" ] || { rm -f "$list"; fail "no library matches $re on this machine"; }
	local ret=0
	unshare -m sh -c 'while read -r l; do mount --bind /dev/null "$(readlink -f "$l")" || exit 99; done <"$1"; shift; exec "$@"' \
		sh "$list" "$@" || ret=$?
	rm -f "$list"
	return $ret
}

# Fail unless CMD... opens no file whose name matches the grep -E
# expression RE (strace): a library loaded only when needed stays out.
opens_none() {
	local re=$1 trace
	shift
	trace=$(mktemp)
	# LeakSanitizer cannot run under ptrace: off for this run alone.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
		strace -f -e trace=openat -o "$trace" "$@" >/dev/null || { rm -f "$trace"; fail "failed: $*"; }
	if grep -E -q "$re" "$trace"; then
		fail "$* opened $(grep -E -o "[^\"]*($re)[^\"]*" "$trace" | head -1)"
	fi
	rm -f "$trace"
}

# The fixture tree without its 5 GiB sparse file (which only slows down
# hashing through a mount), and its manifest.
make_compact_tree() {
	make_fixture_tree "$1"
	rm -f "$1/sparse/sparse-5g.bin"
	manifest "$1" "$2"
}

# kernel_check IMAGE EXPECTED_MANIFEST WHAT: mount, compare, unmount.
kernel_check() {
	local mnt=$T/mnt.$$
	kmount "$1" "$mnt"
	tree_is "$mnt" "$2" "kernel view of $3"
	kumount "$mnt"
}

# tree_is DIR EXPECTED_MANIFEST WHAT: DIR's manifest (kept as DIR.json)
# equals the one expected; one python start for both.
tree_is() {
	local d
	d=$($MANIFEST "$1" -o "$1.json" --expect "$2") || differ "$d" "$3: $2 vs $1.json"
}

# extract_check IMAGE EXPECTED_MANIFEST WHAT: erofskit fsck --extract agrees.
extract_check() {
	rm -rf "$T/extract"
	"$EROFSKIT" fsck -q --extract "$T/extract" "$1" || fail "fsck --extract of $3"
	tree_is "$T/extract" "$2" "erofskit extraction of $3"
	rm -rf "$T/extract"
}

# fmount IMAGE DIR [OPTIONS]: erofskit mount (daemonized), always unmounted
# at exit.
fmount() {
	mkdir -p "$2"
	"$EROFSKIT" mount ${3:+-o "$3"} "$1" "$2" || fail "erofskit mount $1 failed"
	_mounts+=("$2")
	mountpoint -q "$2" || fail "$2 is not a mount point after erofskit mount"
}

# server_running PID: a daemonized server (a child of init) has not exited.
# kill -0 is not enough: an exited process stays a zombie until init reaps
# it, and some inits (this project's CI VM's, for one) reap only about
# once a second, later still under load.
server_running() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }   # past "pid (comm) ", where comm may hold spaces
	case ${stat%% *} in
	'' | Z | X) return 1 ;;
	esac
	return 0
}

# The pid of the erofskit server behind a FUSE mount point.
fmount_pid() {
	pgrep -f "erofskit mount.* $1\$" | head -1
}

fumount() {
	local pid
	pid=$(fmount_pid "$1")
	fusermount3 -u "$1" || umount "$1" || fail "cannot unmount $1"
	forget_mount "$1"
	# The server exits once unmounted.
	for _ in $(seq 50); do
		[ -z "$pid" ] || ! server_running "$pid" && return 0
		sleep 0.1
	done
	fail "erofskit mount server $pid still running after unmount"
}

#!/bin/bash
# Build the Debian packages from debian/, lintian them, install them, use
# them and remove them again.  Run from anywhere in the repository, as root,
# on Debian:
#
#     scripts/deb-check.sh
#
# The build runs on a copy of the files git tracks, as they are in the
# working tree (uncommitted changes included, untracked files left out), in
# a temporary directory: nothing is written into the checkout, .git
# included.  The packages it installs are purged and the temporary
# directory is removed when it ends, also when a step fails.
#
# DEB_JOBS sets the build's parallelism (default 2); KEEP=1 keeps the
# temporary directory (the packages, build.log, lintian.log).
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(erofskit liberofskit-dev liberofskit0)
work=
we_installed=0

step() { echo "== $*"; }
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

cleanup() {
	local rc=$?
	trap - EXIT
	if [ "$we_installed" = 1 ]; then
		dpkg --purge "${PKGS[@]}" >/dev/null 2>&1 ||
			echo "FAIL: could not purge ${PKGS[*]}" >&2
	fi
	if [ -n "$work" ]; then
		if [ "${KEEP:-0}" = 1 ]; then
			echo "kept: $work"
		else
			rm -rf "$work"
		fi
	fi
	if [ "$rc" -eq 0 ]; then
		echo "PASS: deb-check"
	else
		echo "FAIL: deb-check (exit $rc)" >&2
	fi
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ "$(id -u)" -eq 0 ] || fail "run as root: the check installs and removes packages"
[ -f /etc/debian_version ] || fail "not a Debian system"
for p in "${PKGS[@]}"; do
	if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		fail "$p is installed already; this check purges what it installs:" \
			"remove it first (dpkg --purge ${PKGS[*]})"
	fi
done
# Another erofskit under /usr/local would be found before the packaged one
# by the compiler and pkg-config.
for f in /usr/local/include/erofskit /usr/local/lib/pkgconfig/erofskit.pc \
	/usr/local/lib/*/pkgconfig/erofskit.pc; do
	if [ -e "$f" ]; then
		fail "$f exists: the C test would use it instead of the package's"
	fi
done

step "dependencies (scripts/deps.sh --deb)"
scripts/deps.sh --deb || fail "scripts/deps.sh --deb"
pass "dependencies"

step "source: the git-tracked files into a temporary directory"
command -v git >/dev/null || fail "git is needed to list the tracked files"
# As root in a checkout of another user; no optional index refresh.
git=(git --no-optional-locks -c safe.directory="$PWD")
"${git[@]}" rev-parse --git-dir >/dev/null 2>&1 || fail "not a git checkout"
work=$(mktemp -d "${TMPDIR:-/tmp}/erofskit-deb.XXXXXX")
mkdir "$work/erofskit"
# Tracked files deleted in the working tree are left out.
"${git[@]}" ls-files -z | while IFS= read -r -d '' f; do
	if [ -e "$f" ] || [ -L "$f" ]; then printf '%s\0' "$f"; fi
done | tar --null -T - -cf - | tar -xf - -C "$work/erofskit"
[ -x "$work/erofskit/debian/rules" ] || fail "no debian/rules in the tracked files"
changed=
[ -z "$("${git[@]}" status --porcelain --untracked-files=no)" ] ||
	changed=" + uncommitted changes"
pass "source copied ($("${git[@]}" rev-parse --short HEAD)$changed)"

step "dpkg-buildpackage -us -uc -b (parallel=${DEB_JOBS:-2})"
if ! (cd "$work/erofskit" &&
	DEB_BUILD_OPTIONS="parallel=${DEB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
		dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1; then
	tail -n 60 "$work/build.log"
	fail "dpkg-buildpackage (the end of its log is above)"
fi
changes=$(ls "$work"/erofskit_*.changes)
debs=()
for p in "${PKGS[@]}"; do
	deb=$(ls "$work/${p}_"*.deb 2>/dev/null) || fail "no ${p}_*.deb was built"
	debs+=("$deb")
done
pass "built: $(cd "$work" && echo ./*.deb | sed 's|\./||g')"

step "lintian $(basename "$changes")"
lrc=0
lintian --fail-on error --display-info "$changes" >"$work/lintian.log" 2>&1 || lrc=$?
cat "$work/lintian.log"
errors=$(grep -c '^E:' "$work/lintian.log" || true)
warnings=$(grep -c '^W:' "$work/lintian.log" || true)
if [ "$errors" -ne 0 ] || [ "$lrc" -ne 0 ]; then
	fail "lintian: $errors errors, $warnings warnings (exit $lrc)"
fi
pass "lintian: no errors, $warnings warnings"

step "install ${PKGS[*]}"
we_installed=1
if ! dpkg -i "${debs[@]}" >"$work/install.log" 2>&1; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -f -y -q >>"$work/install.log" 2>&1 ||
		{ cat "$work/install.log"; fail "installing the packages"; }
fi
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		{ cat "$work/install.log"; fail "$p is not installed"; }
done
pass "installed: $(dpkg-query -W -f='${Package} ${Version}  ' "${PKGS[@]}")"

step "erofskit mkfs and fsck on a small tree"
ek=/usr/bin/erofskit
use="$work/use"
tree="$use/tree"
mkdir -p "$tree/sub/deeper"
echo "hello from erofskit" >"$tree/hello.txt"
seq 1 100000 >"$tree/numbers"
head -c 300000 /dev/urandom >"$tree/random"
: >"$tree/empty"
printf 'nested\n' >"$tree/sub/deeper/file"
chmod 0750 "$tree/sub"
chmod 0600 "$tree/random"
ln -s hello.txt "$tree/link"
ln -s ../numbers "$tree/sub/uplink"
"$ek" --version
"$ek" mkfs -zlz4hc "$use/img" "$tree" || fail "erofskit mkfs -zlz4hc"
"$ek" fsck --extract "$use/out" "$use/img" || fail "erofskit fsck --extract"
diff -r --no-dereference "$tree" "$use/out" || fail "the extracted tree differs (diff -r)"
# Type, mode, owner, mtime; size and link target but for directories.
listing() {
	(cd "$1" && find . \( -type d -printf '%p %y %m %u:%g %T@\n' \) -o \
		-printf '%p %y %m %u:%g %T@ %s %l\n' | sort)
}
diff <(listing "$tree") <(listing "$use/out") ||
	fail "types, modes, owners, mtimes, sizes or link targets differ"
pass "mkfs -zlz4hc, fsck --extract: the tree comes back the same"

step "a C program against liberofskit-dev (pkg-config erofskit)"
cat >"$use/prog.c" <<'EOF'
#include <erofskit/erofskit.h>
#include <inttypes.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	ek_image *img;
	ek_inode *inode;
	ek_error err;
	ek_nid nid;
	char buf[64];
	ssize_t n;

	if (argc != 2)
		return 2;
	if (ek_open(argv[1], NULL, &img, &err) ||
	    ek_lookup(img, "/hello.txt", &nid, &err) ||
	    ek_inode_get(img, nid, &inode, &err)) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	n = ek_read(inode, buf, sizeof(buf) - 1, 0, &err);
	if (n < 0) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	buf[n] = '\0';
	printf("liberofskit %s: root nid %" PRIu64 ", /hello.txt: %s",
	       ek_version(), (uint64_t)ek_root_nid(img), buf);
	ek_inode_put(inode);
	ek_close(img);
	return 0;
}
EOF
flags=$(pkg-config --cflags --libs erofskit) || fail "pkg-config --cflags --libs erofskit"
echo "pkg-config --cflags --libs erofskit: $flags"
# shellcheck disable=SC2086  # flags are words
cc -Wall -Werror -o "$use/prog" "$use/prog.c" $flags || fail "compiling against the headers"
lib=$(ldd "$use/prog" | awk '$1 == "liberofskit.so.0" { print $3 }')
[ -n "$lib" ] || fail "the program is not linked to liberofskit.so.0"
lib=$(realpath "$lib")
dpkg -S "$lib" 2>/dev/null | grep -q '^liberofskit0[:]' ||
	fail "the program uses $lib, not liberofskit0's"
echo "linked to $lib (liberofskit0)"
out=$("$use/prog" "$use/img") || fail "the C program"
echo "$out"
case "$out" in
*"/hello.txt: hello from erofskit") ;;
*) fail "the C program read something else" ;;
esac
pass "C program: ek_open, ek_lookup, ek_read through the shared library"

step "man pages and completion"
for page in erofskit erofskit-mkfs erofskit-fsck "3 erofskit"; do
	# shellcheck disable=SC2086  # "3 erofskit" is a section and a name
	found=$(man -w $page) || fail "man -w $page finds nothing"
	echo "man -w $page: $found"
done
[ -f /usr/share/bash-completion/completions/erofskit ] ||
	fail "no bash completion"
pass "man -w finds the pages; bash completion installed"

step "remove ${PKGS[*]}"
dpkg --purge "${PKGS[@]}" >/dev/null || fail "dpkg --purge"
we_installed=0
[ ! -e "$ek" ] || fail "$ek is still there after the purge"
pass "purged"

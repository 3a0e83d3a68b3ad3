# `cmake --install` with DESTDIR, as `make install PREFIX=/usr/local
# DESTDIR=...` runs it: every file lands under DESTDIR/usr/local; a C
# program built against the installed headers and library through
# erofskit.pc (shared, and static with --static) reads a file of an image
# that the installed erofskit made; the installed man pages render and man
# finds them; the installed bash completion completes commands, options
# and the values it lists itself, which must be what --help says.
. "$(dirname "$0")/lib.sh"

: "${EROFSKIT_BUILD:?EROFSKIT_BUILD must name the build directory}"
D=$T/dest
P=$D/usr/local

note "cmake --install with DESTDIR"
DESTDIR=$D nice -n 19 cmake --install "$EROFSKIT_BUILD" --prefix /usr/local >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log" >&2; fail "cmake --install failed"; }
outside=$(grep -E '^-- (Installing|Up-to-date): ' "$T/install.log" | sed -E 's/^-- [^:]+: //' | grep -vF "$P/" || true)
[ -z "$outside" ] || fail "installed outside DESTDIR/usr/local: $outside"

pc=$(find "$P" -name erofskit.pc)
[ -n "$pc" ] || fail "no erofskit.pc installed"
libdir=$(dirname "$(dirname "$pc")")
case $libdir in "$P"/lib*) ;; *) fail "erofskit.pc installed in $libdir, not under $P/lib*" ;; esac
for f in bin/erofskit include/erofskit/erofskit.h include/erofskit/build.h \
	include/erofskit/check.h share/bash-completion/completions/erofskit \
	share/man/man1/erofskit.1 share/man/man1/erofskit-mkfs.1 \
	share/man/man1/erofskit-fsck.1 share/man/man1/erofskit-dump.1 \
	share/man/man1/erofskit-mount.1 share/man/man3/erofskit.3 \
	"${libdir#"$P"/}"/liberofskit.a "${libdir#"$P"/}"/liberofskit.so \
	"${libdir#"$P"/}"/liberofskit.so.0; do
	[ -e "$P/$f" ] || fail "not installed: /usr/local/$f"
done
[ -x "$P/bin/erofskit" ] || fail "the installed erofskit is not executable"
[ -z "$(find "$P" -name 'erofskit-bench*')" ] || fail "a benchmark tool was installed"
grep -qx 'prefix=/usr/local' "$pc" || fail "erofskit.pc does not name the prefix /usr/local: $(cat "$pc")"
version=$("$P/bin/erofskit" --version | awk '{print $2}')
grep -qx "Version: $version" "$pc" || fail "erofskit.pc's version is not $version"

note "a program built against the installed library"
S=$T/src
mkdir -p "$S/etc"
head -c 10000 /dev/urandom >"$S/etc/blob"
printf 'installed and read\n' >"$S/etc/hostname"
"$P/bin/erofskit" mkfs -q -zlz4hc "$T/img" "$S" || fail "the installed erofskit mkfs failed"

cat >"$T/prog.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <erofskit/erofskit.h>

/* prog IMAGE PATH: the library's version, the file's size, its bytes. */
int main(int argc, char **argv)
{
	ek_image *img;
	ek_inode *ino;
	ek_error err;
	ek_nid nid;
	char buf[65536];
	ssize_t n;

	if (argc != 3)
		return 2;
	if (ek_open(argv[1], NULL, &img, &err) || ek_lookup(img, argv[2], &nid, &err) ||
	    ek_inode_get(img, nid, &ino, &err)) {
		fprintf(stderr, "prog: %s\n", err.message);
		return 1;
	}
	n = ek_read(ino, buf, sizeof(buf), 0, &err);
	if (n < 0) {
		fprintf(stderr, "prog: %s (%s)\n", err.message, ek_strerror(n));
		return 1;
	}
	printf("%s %llu\n", ek_version(), (unsigned long long)ek_inode_stat(ino)->size);
	fwrite(buf, 1, (size_t)n, stdout);
	ek_inode_put(ino);
	ek_close(img);
	return 0;
}
C
export PKG_CONFIG_PATH=$libdir/pkgconfig
# The sanitized build's library calls the sanitizers' runtimes.
san=()
[ "${EROFSKIT_SANITIZED:-0}" = 1 ] && san=("-fsanitize=address,undefined")
pkgconf() { pkg-config --define-variable=prefix="$P" "$@" erofskit | sed "s/ *$//"; }
cflags=$(pkgconf --cflags) || fail "pkg-config --cflags erofskit failed"
libs=$(pkgconf --libs) || fail "pkg-config --libs erofskit failed"
[ "$cflags" = "-I$P/include" ] || fail "pkg-config --cflags: '$cflags', not -I$P/include"
case " $libs " in *" -L$libdir "*"-lerofskit "*) ;; *) fail "pkg-config --libs: '$libs'" ;; esac
# shellcheck disable=SC2086  # flags are words
nice -n 19 cc -std=c11 -Wall -Werror "${san[@]}" -o "$T/prog-shared" "$T/prog.c" $cflags $libs ||
	fail "cannot build against the installed shared library"
static_libs=$(pkgconf --static --libs) || fail "pkg-config --static --libs erofskit failed"
static_libs=$(echo " $static_libs " | sed 's/ -lerofskit / -l:liberofskit.a /')
# shellcheck disable=SC2086
nice -n 19 cc -std=c11 -Wall -Werror "${san[@]}" -o "$T/prog-static" "$T/prog.c" $cflags $static_libs ||
	fail "cannot build against the installed static library with pkg-config --static"
# (ldd's output taken whole: grep -q would leave it a closed pipe)
deps=$(ldd "$T/prog-static") || fail "ldd prog-static failed"
! grep -q liberofskit <<<"$deps" || fail "prog-static links liberofskit.so: $deps"
deps=$(LD_LIBRARY_PATH=$libdir ldd "$T/prog-shared") || fail "ldd prog-shared failed"
grep -qF "$libdir/liberofskit.so.0" <<<"$deps" ||
	fail "prog-shared does not load the installed liberofskit.so.0: $deps"

for prog in prog-shared prog-static; do
	for f in /etc/hostname /etc/blob; do
		LD_LIBRARY_PATH=$libdir "$T/$prog" "$T/img" "$f" >"$T/out" || fail "$prog $f failed"
		size=$(stat -c %s "$S$f")
		[ "$(head -n1 "$T/out")" = "$version $size" ] ||
			fail "$prog $f printed '$(head -n1 "$T/out")', not '$version $size'"
		tail -c +"$(($(head -n1 "$T/out" | wc -c) + 1))" "$T/out" | cmp -s - "$S$f" ||
			fail "$prog $f read other bytes than the file's"
	done
done

note "the installed man pages"
export MANWIDTH=80 LC_ALL=C.UTF-8
unset MANPAGER PAGER
for page in "$P"/share/man/man1/*.1 "$P"/share/man/man3/*.3; do
	w=$(man -l --warnings "$page" 2>&1 >/dev/null) || fail "man -l $page failed: $w"
	[ -z "$w" ] || fail "man -l $page warns: $w"
done
for name in erofskit erofskit-mkfs erofskit-fsck erofskit-dump erofskit-mount; do
	found=$(MANPATH=$P/share/man man -w "$name" 2>/dev/null) || fail "man -w $name finds no page"
	[ "$found" = "$P/share/man/man1/$name.1" ] || fail "man -w $name: $found"
done
found=$(MANPATH=$P/share/man man -w 3 erofskit 2>/dev/null) || fail "man -w 3 erofskit finds no page"
[ "$found" = "$P/share/man/man3/erofskit.3" ] || fail "man -w 3 erofskit: $found"

note "the installed bash completion"
# complete WORDS...: what the completion offers for the last word, sorted,
# space separated, in a fresh bash that found erofskit on its PATH.
complete_words() {
	PATH=$P/bin:$PATH bash --norc --noprofile -c '
		. "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
		_erofskit
		printf "%s\n" "${COMPREPLY[@]}"' bash \
		"$P/share/bash-completion/completions/erofskit" "$@" | sort | xargs
}
spec=$(bash --norc --noprofile -c '. "$1"; complete -p erofskit' bash \
	"$P/share/bash-completion/completions/erofskit") || fail "the completion script does not load"
[ "$spec" = "complete -F _erofskit erofskit" ] || fail "complete -p erofskit: $spec"

expect() {   # expect "WANT" WORDS...
	local want=$1 got
	shift
	got=$(complete_words "$@")
	[ "$got" = "$want" ] || fail "completing '$*': got '$got', want '$want'"
}
expect "mkfs" erofskit mk
expect "$(printf '%s\n' --help --version -V -h dump fsck mkfs mount push | sort | xargs)" erofskit ""
expect "lz4 lz4hc lzma" erofskit mkfs -z l
expect "-zlz4 -zlz4hc" erofskit mkfs -zlz4
expect "isal" erofskit fsck --engine i
expect "" erofskit mkfs -L ""
expect "$T/img" erofskit fsck "$T/im"

# Every option each --help lists, and the values the script lists itself
# (algorithms, engines, -E's and -o's names) against the help texts.
help_opts() {
	"$P/bin/erofskit" "$1" --help | sed -n '/^options:/,/^[^ ]/p' |
		sed -nE 's/^ +(-[^ ,]+(, -[^ ,]+)*).*/\1/p' | sed 's/, /\n/g' | sort -u | xargs
}
# The names of the comma lists' items: an indented name with a value
# (name=..., name[=...]), or a bare name followed by two spaces.
help_items() {
	"$P/bin/erofskit" "$1" --help | sed -n '/^options:/,/^[^ ]/p' |
		sed -nE -e 's/^ {3,}([a-z][a-z_-]*\[?=[^ ]*) .*/\1/p' -e 't' \
			-e 's/^ {3,}([a-z][a-z_-]*)  .*/\1/p' | tr , '\n' |
		sed -E 's/[=[].*//' | sort -u | xargs
}
names() { tr ' ' '\n' | sed 's/=.*//' | sort -u | xargs; }
for c in mkfs fsck dump mount push; do
	want=$(help_opts "$c")
	[ -n "$want" ] || fail "erofskit $c --help lists no options"
	expect "$want" erofskit "$c" -
done
want=$("$P/bin/erofskit" mkfs --help | sed -nE 's/.*compress: (.*)$/\1/p' | tr -d ',' |
	sed 's/ or / /' | tr ' ' '\n' | sort | xargs)
[ -n "$want" ] || fail "mkfs --help names no algorithm"
expect "$want" erofskit mkfs -z ""
want=$("$P/bin/erofskit" fsck --help | sed -nE 's/^ +(deflate|lzma): //p' |
	sed 's/([^)]*)//g' | tr -d ',' | tr ' ' '\n' | grep . | sort | xargs)
expect "$want" erofskit fsck --engine ""
expect "$want" erofskit dump --engine ""
# mkfs's help lists -E's names and -o's.
mkfs_items=$({ complete_words erofskit mkfs -E ""; complete_words erofskit mkfs -o ""; } | names)
[ "$mkfs_items" = "$(help_items mkfs)" ] ||
	fail "completing mkfs -E and -o: $mkfs_items, mkfs --help: $(help_items mkfs)"
[ "$(complete_words erofskit mount -o "" | names)" = "$(help_items mount)" ] ||
	fail "completing mount -o: $(complete_words erofskit mount -o "" | names), mount --help: $(help_items mount)"
for c in fsck dump push; do
	[ "$(complete_words erofskit "$c" -o "" | names)" = "$(help_items "$c")" ] ||
		fail "completing $c -o: $(complete_words erofskit "$c" -o "" | names), $c --help: $(help_items "$c")"
done
expect "cache=1G,engine=" erofskit mount -o cache=1G,en
note "ok"

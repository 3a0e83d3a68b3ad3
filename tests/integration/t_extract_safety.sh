# A hostile image cannot make fsck --extract write outside DIR, and what
# already is in DIR is never followed:
#  1. names with '/' (relative ../../ climbs and absolute paths), extra "."
#     and ".." entries, a directory that contains itself or an ancestor, and
#     a symlink followed (in the next directory block) by a directory, a
#     file or a hard link of the same name: with and without --overwrite,
#     with one and several workers, fsck --extract exits 1 and nothing
#     changes outside DIR (the symlinks point at a directory holding a
#     canary; a planted name under /tmp must not appear);
#  2. a symlink, a hard link or a fifo already in DIR under a name the image
#     uses is never written through: without --overwrite the extraction
#     stops with "already exists" (exit 2), with --overwrite the entry is
#     replaced (exit 0) and the outside target keeps its content;
#  3. a huge i_size or xattr size cannot exhaust memory: under a 1 GiB
#     limit fsck and fsck --extract exit 1 (0 for a valid 4 EiB hole) within
#     30 s (each image is tiny), with no crash; when the check hangs the
#     extraction is not tried (it would only hang as well).
. "$(dirname "$0")/lib.sh"

[ -z "${ASAN_OPTIONS:-}" ] || export ASAN_OPTIONS="$ASAN_OPTIONS:exitcode=86"
[ -z "${UBSAN_OPTIONS:-}" ] || export UBSAN_OPTIONS="$UBSAN_OPTIONS:exitcode=86"
PY=$(python3 -c 'import sys; print(sys.executable)')
ESCAPE=/tmp/erofskit-corpus-escape
OUT=$T/outside

# reset_outside: the directory the hostile symlinks point at, with canaries;
# outside_intact WHAT: it holds exactly that, and nothing was planted.
reset_outside() {
	rm -rf "$OUT"
	mkdir -p "$OUT/d"
	echo "outside canary" > "$OUT/canary"
	echo "outside target" > "$OUT/target"
	echo "outside hard link" > "$OUT/hl"
}
outside_intact() {
	[ "$(cd "$OUT" && find . | sort | tr '\n' ' ')" = ". ./canary ./d ./hl ./target " ] ||
		{ (cd "$OUT" && find . -ls) >&2; fail "$1: something changed in $OUT"; }
	[ "$(cat "$OUT/canary")" = "outside canary" ] || fail "$1: $OUT/canary was written"
	[ "$(cat "$OUT/target")" = "outside target" ] || fail "$1: $OUT/target was written"
	[ "$(cat "$OUT/hl")" = "outside hard link" ] || fail "$1: $OUT/hl was written"
	[ ! -e "$ESCAPE" ] && [ ! -L "$ESCAPE" ] || fail "$1: $ESCAPE was created"
}
no_sanitizer() {
	! grep -qE "Sanitizer|runtime error:" "$1" || { head -20 "$1" >&2; fail "$2: sanitizer report"; }
}

rm -rf "$ESCAPE"
reset_outside
"$PY" "$HERE/../corrupt/make-corpus.py" --outside "$OUT" \
	--case 'hostile-*' --case 'dir-*' --case 'isize-*' --case 'xattr-*' \
	--case 'symlink-*' "$T/c" >/dev/null || fail "make-corpus.py failed"

# --- 1. hostile images ----------------------------------------------------
bad=()
for img in "$T"/c/hostile-*.img "$T"/c/dir-*.img; do
	name=$(basename "$img" .img)
	for opts in "" "--overwrite" "--workers 1" "--overwrite --workers 4"; do
		w=$T/w
		rm -rf "$w"
		mkdir -p "$w"
		echo canary > "$w/canary"
		rc=0
		# shellcheck disable=SC2086
		timeout 60 "$EROFSKIT" fsck -q $opts --extract "$w/out" "$img" >/dev/null 2>"$T/err" || rc=$?
		no_sanitizer "$T/err" "$name $opts"
		outside_intact "$name $opts"
		[ "$(ls -A "$w" | sort | tr '\n' ' ')" = "canary out " ] ||
			fail "$name $opts: extraction left $(ls -A "$w") beside DIR"
		[ "$(cat "$w/canary")" = canary ] || fail "$name $opts: the canary changed"
		# Nothing in DIR is a hard link to a file outside it.
		[ -z "$(find "$w/out" -type f -samefile "$OUT/canary" -o -type f -samefile "$OUT/target")" ] ||
			fail "$name $opts: DIR holds a hard link to an outside file"
		if [ "$rc" -ne 1 ]; then
			echo "$name ${opts:-(no options)}: exit $rc, expected 1: $(head -1 "$T/err")" >&2
			bad+=("$name${opts:+ $opts}")
		fi
	done
done

# --- 2. what is already in DIR ---------------------------------------------
mkdir -p "$T/src/dir"
echo "from the image" > "$T/src/a.txt"
echo "inner" > "$T/src/dir/inner.txt"
ln -s a.txt "$T/src/link"
"$EROFSKIT" mkfs -q "$T/good.img" "$T/src" || fail "mkfs of the small tree"

# preexisting NAME KIND: DIR holds NAME (maybe in a real subdirectory) as a
# symlink to an outside file or directory, a hard link to an outside file,
# or a fifo.
preexisting() {
	rm -rf "$T/d"
	mkdir -p "$T/d/$(dirname "$1")"
	case $2 in
	symlink-file) ln -s "$OUT/target" "$T/d/$1" ;;
	symlink-dir) ln -s "$OUT/d" "$T/d/$1" ;;
	hardlink) ln "$OUT/hl" "$T/d/$1" ;;
	fifo) mkfifo "$T/d/$1" ;;
	esac
}
for spec in a.txt:symlink-file dir:symlink-dir a.txt:hardlink link:symlink-file \
	    a.txt:fifo dir/inner.txt:symlink-file; do
	entry=${spec%%:*} kind=${spec#*:}
	what="$kind in DIR as $entry"
	preexisting "$entry" "$kind"
	rc=0
	timeout 60 "$EROFSKIT" fsck -q --extract "$T/d" "$T/good.img" >/dev/null 2>"$T/err" || rc=$?
	no_sanitizer "$T/err" "$what"
	[ "$rc" -eq 2 ] || { cat "$T/err" >&2; fail "$what, no --overwrite: exit $rc, expected 2"; }
	# The entry's path in the image, then the directory it is in the way in.
	grep -qxF "erofskit fsck: /$entry: already exists in $T/d (use --overwrite)" "$T/err" ||
		{ cat "$T/err" >&2; fail "$what: not '/$entry: already exists in DIR'"; }
	outside_intact "$what, no --overwrite"
	[ -z "$(ls -A "$OUT/d")" ] || fail "$what: written into $OUT/d"
	case $kind in
	symlink-*) [ -L "$T/d/$entry" ] || fail "$what: replaced without --overwrite" ;;
	hardlink) [ "$T/d/$entry" -ef "$OUT/hl" ] || fail "$what: replaced without --overwrite" ;;
	esac

	rc=0
	timeout 60 "$EROFSKIT" fsck -q --overwrite --extract "$T/d" "$T/good.img" >/dev/null 2>"$T/err" || rc=$?
	no_sanitizer "$T/err" "$what --overwrite"
	[ "$rc" -eq 0 ] || { cat "$T/err" >&2; fail "$what, --overwrite: exit $rc, expected 0"; }
	outside_intact "$what, --overwrite"
	[ -z "$(ls -A "$OUT/d")" ] || fail "$what --overwrite: written into $OUT/d"
	cmp -s "$T/d/a.txt" "$T/src/a.txt" && [ ! -L "$T/d/a.txt" ] && ! [ "$T/d/a.txt" -ef "$OUT/hl" ] ||
		fail "$what --overwrite: a.txt not replaced by the image's file"
	[ -d "$T/d/dir" ] && [ ! -L "$T/d/dir" ] && [ ! -L "$T/d/dir/inner.txt" ] &&
		cmp -s "$T/d/dir/inner.txt" "$T/src/dir/inner.txt" ||
		fail "$what --overwrite: dir/inner.txt not extracted in place"
	[ "$(readlink "$T/d/link")" = a.txt ] || fail "$what --overwrite: link not replaced"
done

# --- 3. memory -------------------------------------------------------------
# 1 GiB of address space; AddressSanitizer reserves terabytes of it, so the
# sanitized build gets allocation and RSS limits instead (allocations past
# them fail as under ulimit; the hard limit aborts, which fails the test).
if [ "${EROFSKIT_SANITIZED:-0}" = 1 ]; then
	limited() {
		ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=1:max_allocation_size_mb=1024:soft_rss_limit_mb=1024:hard_rss_limit_mb=2048" "$@"
	}
else
	limited() { (ulimit -v 1048576 && exec "$@"); }
fi
for name in isize-huge-flat isize-negative isize-huge-compressed isize-huge-dir \
	    isize-huge-chunked isize-huge-hole xattr-icount-huge xattr-entry-overflow \
	    xattr-name-overflow symlink-longer-than-pathmax; do
	img=$T/c/$name.img
	[ -f "$img" ] || fail "no corpus image $name"
	want=1
	[ "$name" = isize-huge-hole ] && want=0
	hung=no
	for mode in check extract; do
		rm -rf "$T/mx"
		rc=0
		if [ $mode = check ]; then
			limited timeout 30 "$EROFSKIT" fsck -q "$img" >/dev/null 2>"$T/err" || rc=$?
		elif [ "$hung" = yes ]; then
			bad+=("$name extract not run: the check hung")
			continue
		else
			limited timeout 30 "$EROFSKIT" fsck -q --extract "$T/mx" "$img" >/dev/null 2>"$T/err" || rc=$?
		fi
		hung=no
		[ "$rc" -ne 124 ] || hung=yes
		no_sanitizer "$T/err" "$name $mode under 1 GiB"
		ok=$want
		# A 4 EiB file may not fit the target filesystem: exit 2 there.
		[ $mode = extract ] && [ "$name" = isize-huge-hole ] && [ "$rc" -eq 2 ] && ok=2
		if [ "$rc" -ne "$ok" ]; then
			echo "$name $mode under 1 GiB: exit $rc, expected $want: $(head -1 "$T/err")" >&2
			bad+=("$name $mode under 1 GiB")
		fi
	done
done
outside_intact "memory cases"

[ ${#bad[@]} -eq 0 ] || fail "${#bad[@]} failures: ${bad[*]}"
echo PASS

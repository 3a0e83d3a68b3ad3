# Drop-in names: erofskit run as mkfs.erofs, fsck.erofs and dump.erofs
# (BUILD/dropin/*, symlinks) takes erofs-utils' spellings of the options it
# implements and gives the same result as erofskit's own spellings:
# containerd's mkfs command lines (a directory, and verbatim with a tar on
# stdin, also --tar=i) build byte-identical images, --extract=DIR the same
# tree, --path=P the same dump.  Every other option exits 2 naming it; -V
# prints the version.  Last, EROFSKIT_INSTALL_DROPIN_LINKS=ON installs the
# links (into a DESTDIR, the 'dropin' component alone: no build needed).
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
D=${EROFSKIT_BUILD:-$(dirname "$E")}/dropin
for n in mkfs.erofs fsck.erofs dump.erofs; do
	[ -L "$D/$n" ] || fail "$D/$n is not a symlink (the build makes it beside erofskit)"
	[ "$(realpath "$D/$n")" = "$(realpath "$E")" ] || fail "$D/$n does not lead to $E"
done
MKFS=$D/mkfs.erofs FSCK=$D/fsck.erofs DUMP=$D/dump.erofs
cd "$T"

S=$T/src
mkdir -p "$S/dir/sub" "$S/dev"
printf 'hello, drop-in\n' >"$S/dir/small.txt"
head -c $((300 * 1024 + 5)) /dev/urandom >"$S/dir/random.bin"
# Compressible, with a tail: the layout options (-E, -C) change the image.
for i in $(seq 1 4000); do echo "line $i of a compressible file"; done >"$S/dir/text"
head -c 70000 "$S/dir/text" >"$S/dir/sub/tail.txt"
ln "$S/dir/small.txt" "$S/dir/sub/hardlink"
ln -s ../dir/small.txt "$S/dir/link"
mknod "$S/dev/char" c 1 3
mkfifo "$S/dev/fifo"
setfattr -n user.colour -v blue "$S/dir/small.txt"
setfattr -n trusted.t -v x "$S/dir/random.bin"
chown 1234:5678 "$S/dir/random.bin"
touch -d @1600000000.5 "$S/dir/text"
UUID=6f1e3a0c-55b2-4d8e-9a47-0c3b2f81d9e4

# same_image WHAT DROPIN_ARGS... -- EROFSKIT_ARGS...: both build from $S
# (operands appended) and must give byte-identical images.
same_image() {
	local what=$1 a=() b=()
	shift
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	rm -f dropin.img own.img
	"$MKFS" "${a[@]}" dropin.img "$S" >mkfs.out 2>mkfs.err ||
		{ cat mkfs.err >&2; fail "$what: mkfs.erofs ${a[*]} failed"; }
	"$E" mkfs "${b[@]}" own.img "$S" >/dev/null || fail "$what: erofskit mkfs ${b[*]} failed"
	cmp -s dropin.img own.img ||
		fail "$what: mkfs.erofs ${a[*]} and erofskit mkfs ${b[*]} differ"
}

# sb_field IMAGE KEY: one value of erofskit's superblock JSON.
sb_field() {
	"$E" dump --json "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}

note "mkfs.erofs: containerd's command line, a directory for the tar"
same_image "containerd (all options)" \
	--quiet -Enoinline_data -T0 --mkfs-time --sort=none -U "$UUID" -- \
	-q -E noinline_data -T 0 --mkfs-time -U "$UUID"
[ ! -s mkfs.out ] || fail "mkfs.erofs --quiet wrote to stdout: $(cat mkfs.out)"
[ "$(sb_field dropin.img uuid)" = "$UUID" ] || fail "-U $UUID: the image's UUID is $(sb_field dropin.img uuid)"
[ "$(sb_field dropin.img epoch)" = 0 ] || fail "-T0 --mkfs-time: the build time is $(sb_field dropin.img epoch)"
# --mkfs-time kept the files' own times.
"$E" dump --json --path /dir/text dropin.img | grep -q '"mtime": 1600000000' ||
	fail "-T0 --mkfs-time: /dir/text lost its mtime"
same_image "containerd (no -T, -U)" --quiet -Enoinline_data -- -q -E noinline_data
[ ! -s mkfs.out ] || fail "mkfs.erofs --quiet wrote to stdout: $(cat mkfs.out)"

note "mkfs.erofs: compression, layout, owners, both spellings of values"
same_image "-z -C -E --workers= -b -L --all-root -T" \
	-zlz4hc,12 -C65536 -Eztailpacking,fragments,dedupe --workers=2 -b4096 -L dropin \
	--all-root -T 100 -- \
	-z lz4hc,12 -C 65536 -E ztailpacking,fragments,dedupe --workers 2 -b 4096 -L dropin \
	--all-root -T 100
[ "$(sb_field dropin.img label)" = dropin ] || fail "-L dropin: label $(sb_field dropin.img label)"
same_image "-z ALG,level=N, separate values" \
	-z deflate,level=6 -C 16384 -E all-fragments -E ^dedupe --workers 1 -- \
	-zdeflate,level=6 -C16384 -Eall-fragments -E^dedupe --workers 1
same_image "-m SIZE:ALG (the metabox)" -zlz4hc -m 4096:lz4hc -T 5 -- -zlz4hc -m4096 -T 5
"$E" dump dropin.img | grep -q metabox || fail "mkfs.erofs -m: no metabox in the image"
same_image "--clean, --clean=data, --async-queue-limit=" \
	--clean --clean=data --async-queue-limit=4 -T 5 -- -T 5
same_image "--force-uid= --force-gid= -x -1 -U clear -d --all-time" \
	--force-uid=7 --force-gid=8 -x -1 -U clear -d 3 -T 5 --all-time -- \
	--force-uid 7 --force-gid 8 --no-xattrs -U 00000000-0000-0000-0000-000000000000 -T 5
[ "$(sb_field dropin.img uuid)" = 00000000-0000-0000-0000-000000000000 ] || fail "-U clear"
# And the options matter: without them the image differs (so the
# comparisons above can fail).
"$E" mkfs -q plain.img "$S"
cmp -s plain.img dropin.img && fail "the options changed nothing: the comparisons prove nothing"

note "mkfs.erofs -x N: an xattr on more than N inodes is shared, as mkfs.erofs 1.5 shares it"
# Xattrs on one, two and three inodes; whether each file's is shared
# shows in its xattr size (the 4-byte id of a shared one against the
# whole inline entry).
X=$T/xsrc
mkdir -p "$X"
for i in 1 2 3 4 5 6; do echo "$i" >"$X/f$i"; done
setfattr -n user.once -v 1 "$X/f1"
for f in f2 f3; do setfattr -n user.twice -v 2 "$X/$f"; done
for f in f4 f5 f6; do setfattr -n user.thrice -v 3 "$X/$f"; done
manifest "$X" xsrc.json
xattr_sizes() {   # IMAGE: f1's, f2's and f4's xattr sizes
	local f
	for f in f1 f2 f4; do
		"$E" dump --json --path /$f "$1" |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["xattr_size"])'
	done | tr '\n' ' '
}
for x in 0 1 2 3; do
	"$MKFS" --quiet -x $x x-ours.img "$X" || fail "mkfs.erofs -x $x failed"
	mkfs.erofs -x $x x-theirs.img "$X" >/dev/null 2>&1 || fail "Debian's mkfs.erofs -x $x failed"
	[ "$(xattr_sizes x-ours.img)" = "$(xattr_sizes x-theirs.img)" ] ||
		fail "-x $x: xattr sizes $(xattr_sizes x-ours.img), mkfs.erofs 1.5's $(xattr_sizes x-theirs.img)"
	kernel_check x-ours.img xsrc.json "mkfs.erofs -x $x"
done
# The sizes tell shared from inline (so the comparisons above can fail):
# -x 3 (the last built) keeps all three inline, -x 0 shares them all.
[ "$(xattr_sizes x-ours.img)" = "24 24 24 " ] || fail "-x 3: sizes $(xattr_sizes x-ours.img)"
"$MKFS" --quiet -x 0 x0.img "$X" && "$E" mkfs -q --xattr-share 1 x1.img "$X" && cmp -s x0.img x1.img ||
	fail "mkfs.erofs -x 0 is not erofskit mkfs --xattr-share 1"
[ "$(xattr_sizes x0.img)" = "16 16 16 " ] || fail "-x 0: sizes $(xattr_sizes x0.img)"
"$E" mkfs -q x-default.img "$X" && "$MKFS" --quiet -x 1 x-one.img "$X" && cmp -s x-default.img x-one.img ||
	fail "erofskit's default is not mkfs.erofs -x 1"

note "fsck.erofs"
"$MKFS" --quiet -zlz4hc -Eztailpacking image.img "$S"
"$FSCK" image.img >/dev/null || fail "fsck.erofs IMAGE"
mkdir empty
(cd empty && "$FSCK" --extract -d 0 -a ../image.img >/dev/null) ||
	fail "fsck.erofs --extract IMAGE (check only)"
[ -z "$(ls -A empty)" ] || fail "a bare --extract wrote files: $(ls -A empty)"
"$FSCK" --extract="$T/x1" --workers=2 --preserve image.img >/dev/null || fail "fsck.erofs --extract=DIR"
"$E" fsck -q --extract "$T/x2" image.img || fail "erofskit fsck --extract"
manifest "$T/x1" x1.json
manifest "$T/x2" x2.json
same_manifest x2.json x1.json "fsck.erofs --extract=DIR vs erofskit fsck --extract DIR"
manifest "$S" src.json
same_manifest src.json x1.json "fsck.erofs --extract=DIR vs the source"
# An existing tree: refused without --overwrite, replaced with it.
expect_exit 2 "$FSCK" --extract="$T/x1" image.img >/dev/null 2>&1
"$FSCK" --extract="$T/x1" --overwrite --force image.img >/dev/null || fail "--overwrite"
# --no-xattrs and --no-preserve-owner reach erofskit.
"$FSCK" --extract="$T/x3" --no-xattrs --no-preserve-owner image.img >/dev/null ||
	fail "--no-xattrs --no-preserve-owner"
[ -z "$(getfattr --absolute-names -d -m - "$T/x3/dir/small.txt" 2>/dev/null)" ] ||
	fail "--no-xattrs: xattrs were restored"
[ "$(stat -c %u "$T/x3/dir/random.bin")" = 0 ] || fail "--no-preserve-owner: the owner was restored"
[ "$(stat -c %u:%g "$T/x1/dir/random.bin")" = 1234:5678 ] || fail "--extract as root: owner not restored"
# A foreign image (no EROFS magic) still exits 1 through the drop-in name.
cp image.img bad.img
printf 'XXXX' | dd of=bad.img bs=1 seek=1024 conv=notrunc status=none
expect_exit 1 "$FSCK" bad.img >/dev/null 2>&1

note "dump.erofs"
nid=$("$E" dump --json --path /dir/small.txt image.img |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["nid"])')
check_dump() {   # check_dump WHAT "DROPIN ARGS" "EROFSKIT ARGS"
	# shellcheck disable=SC2086
	"$DUMP" $2 image.img >dump.a 2>dump.err || { cat dump.err >&2; fail "dump.erofs $2"; }
	# shellcheck disable=SC2086
	"$E" dump $3 image.img >dump.b || fail "erofskit dump $3"
	[ -s dump.a ] || fail "dump.erofs $2: no output"
	cmp -s dump.a dump.b || { diff dump.a dump.b | head >&2; fail "$1: dump.erofs $2 differs"; }
}
check_dump "superblock" "" ""
check_dump "superblock -s" "-s" ""
check_dump "--path=" "--path=/dir/small.txt" "--path /dir/small.txt"
check_dump "--path (separate value), -e" "-e --path /dir/text" "--path /dir/text"
check_dump "--nid=" "--nid=$nid" "--nid $nid"
check_dump "--ls --path=" "--ls --path=/dir" "--ls /dir"
check_dump "--cat --path=" "--path=/dir/random.bin --cat" "--cat /dir/random.bin"
cmp -s dump.a "$S/dir/random.bin" || fail "dump.erofs --cat: not the file's bytes"

note "refused options: exit 2, the option named, nothing built"
# refused TEXT CMD...: exit 2, TEXT in the message, nothing on stdout, no out.img.
refused() {
	local text=$1 rc=0
	shift
	rm -f out.img
	"$@" >ref.out 2>ref.err || rc=$?
	[ $rc -eq 2 ] || { cat ref.err >&2; fail "expected exit 2, got $rc: $*"; }
	grep -qF -- "$text" ref.err || { cat ref.err >&2; fail "the message does not name '$text': $*"; }
	[ ! -s ref.out ] || fail "a refusal wrote to stdout: $*"
	compgen -G 'out.img*' >/dev/null && fail "an image was written despite: $*"
	return 0
}
for opt in --no-such-option --vmdk-desc=desc -p; do
	refused "'${opt%%=*}'" "$MKFS" --quiet "$opt" out.img "$S"
	grep -qF "not supported by erofskit" ref.err || fail "$opt: the message does not say why"
done
refused "'--vmdk-desc'" "$MKFS" --vmdk-desc desc out.img "$S"
refused "--clean=rvsp is not supported" "$MKFS" --clean=rvsp out.img "$S"
refused "--tar-copy takes a tar source" "$MKFS" --ungzip=raw.tar out.img "$S"
# Upstream's rebuild mode (EROFS images as sources) is named, not "not a
# directory", where erofskit does not build it: without --clean=data (a
# metadata image over the source as a blob device; t_rebuild builds with
# it) and from several images; a tar without --tar gets mkfs's hint.
refused "image.img is an EROFS image: rebuild mode without --clean=data" "$MKFS" out.img image.img
refused "more than one SOURCE: rebuild mode" "$MKFS" out.img image.img image.img
tar -C "$S" -cf src.tar .
refused "src.tar is a tar archive: build from it with --tar" "$MKFS" out.img src.tar
rm src.tar
refused "'abc'" "$MKFS" -x abc out.img "$S"
refused "--xattr-share '0'" "$E" mkfs --xattr-share 0 out.img "$S"
refused "--xattr-share takes a directory source" "$E" mkfs --tar --xattr-share 3 out.img /dev/null
refused "'-q'" "$MKFS" -q out.img "$S"              # no mkfs.erofs option either
refused "'-p'" "$MKFS" -Enoinline_data -T0 -p out.img "$S"
refused "'--quiet'" "$MKFS" --quiet=1 out.img "$S"
refused "--sort=tar" "$MKFS" --sort=tar out.img "$S"
refused "bogus-option" "$MKFS" -Ebogus-option out.img "$S"  # erofskit's own message
# the xattr name filter, upstream's -E name: erofskit's default, and off
"$MKFS" --quiet -Exattr-name-filter filter-on.img "$S" || fail "-Exattr-name-filter was refused"
"$EROFSKIT" mkfs -q filter-default.img "$S"
cmp filter-on.img filter-default.img || fail "-Exattr-name-filter is not the default image"
"$MKFS" --quiet -E^xattr-name-filter filter-off.img "$S" || fail "-E^xattr-name-filter was refused"
"$EROFSKIT" mkfs -q --no-xattr-filter filter-none.img "$S"
cmp filter-off.img filter-none.img || fail "-E^xattr-name-filter is not --no-xattr-filter"
! cmp -s filter-on.img filter-off.img || fail "the filter changed nothing: the test proves nothing"
rm filter-*.img
refused "--tar=x" "$MKFS" --tar=x out.img </dev/null
refused "--aufs needs --tar" "$MKFS" --aufs out.img "$S"

note "mkfs.erofs: containerd's command lines, verbatim, a tar on stdin"
tar -C "$S" -cf layer.tar .
# containerd's arguments | erofskit's own for the same image
while IFS='|' read -r args own; do
	rm -f layer.erofs
	# shellcheck disable=SC2086
	"$MKFS" $args layer.erofs <layer.tar >mkfs.out 2>mkfs.err ||
		{ cat mkfs.err >&2; fail "mkfs.erofs $args failed"; }
	[ ! -s mkfs.out ] && [ ! -s mkfs.err ] || fail "mkfs.erofs $args --quiet printed something"
	# shellcheck disable=SC2086
	"$E" mkfs $own ref.erofs layer.tar || fail "erofskit mkfs $own failed"
	cmp layer.erofs ref.erofs || fail "mkfs.erofs $args: not erofskit's image"
	"$E" fsck -q layer.erofs || fail "mkfs.erofs $args: the image is not clean"
done <<EOF2
--tar=f --aufs --quiet -Enoinline_data|--tar --aufs -q -E noinline_data
--tar=f --aufs --quiet -Enoinline_data -T0 --mkfs-time --sort=none -U $UUID|--tar --aufs -q -E noinline_data -T 0 --mkfs-time -U $UUID
EOF2
[ "$(sb_field layer.erofs uuid)" = "$UUID" ] || fail "-U $UUID: the layer's UUID is $(sb_field layer.erofs uuid)"
# --gzip: a gzip layer, as erofskit reads every compressed one
gzip -c layer.tar >layer.tar.gz
"$MKFS" --tar=f --gzip --quiet gz.erofs <layer.tar.gz || fail "mkfs.erofs --tar=f --gzip failed"
"$E" mkfs --tar -q ref.erofs layer.tar.gz || fail "erofskit mkfs --tar of a .tar.gz failed"
cmp gz.erofs ref.erofs || fail "mkfs.erofs --gzip: not erofskit's image"
# --ungzip and --unxz (upstream's later names): the same, xz by content too
rm -f gz.erofs
"$MKFS" --tar=f --ungzip --quiet gz.erofs <layer.tar.gz || fail "mkfs.erofs --tar=f --ungzip failed"
cmp gz.erofs ref.erofs || fail "mkfs.erofs --ungzip: not erofskit's image"
xz -c layer.tar >layer.tar.xz
"$MKFS" --tar=f --unxz --quiet xz.erofs <layer.tar.xz || fail "mkfs.erofs --tar=f --unxz failed"
cmp xz.erofs ref.erofs || fail "mkfs.erofs --unxz: not erofskit's image"
# --unlzma: xz/lzma/lzip, found by content too
xz --format=lzma -c layer.tar >layer.tar.lzma
rm -f xz.erofs
"$MKFS" --tar=f --unlzma --quiet xz.erofs <layer.tar.lzma || fail "mkfs.erofs --tar=f --unlzma failed"
cmp xz.erofs ref.erofs || fail "mkfs.erofs --unlzma: not erofskit's image"
# =FILE: the decompressed tar beside the image; with --tar=i, the tar the
# index points into
"$MKFS" --tar=i --unxz=raw.tar --quiet xi.erofs <layer.tar.xz || fail "mkfs.erofs --tar=i --unxz=FILE failed"
cmp raw.tar layer.tar || fail "mkfs.erofs --unxz=FILE: the copy is not the tar"
"$E" mkfs --tar=i -q ref-i.erofs layer.tar || fail "erofskit mkfs --tar=i failed"
cmp xi.erofs ref-i.erofs || fail "mkfs.erofs --tar=i --unxz=FILE: not erofskit's index of the tar"
rm -f raw.tar
"$MKFS" --tar=f --ungzip=raw.tar --quiet gz.erofs layer.tar.gz || fail "mkfs.erofs --ungzip=FILE failed"
cmp raw.tar layer.tar || fail "mkfs.erofs --ungzip=FILE: the copy is not the tar"
cmp gz.erofs ref.erofs || fail "mkfs.erofs --ungzip=FILE: not erofskit's image"
rm -f gz.erofs xz.erofs xi.erofs ref-i.erofs raw.tar layer.tar.gz layer.tar.xz
# the index mode line: then the tar is appended, and the one file mounts
rm -f layer.erofs
"$MKFS" --tar=i --aufs --quiet -U "$UUID" layer.erofs <layer.tar >mkfs.out 2>mkfs.err ||
	{ cat mkfs.err >&2; fail "mkfs.erofs --tar=i failed"; }
[ ! -s mkfs.out ] && [ ! -s mkfs.err ] || fail "mkfs.erofs --tar=i --quiet printed something"
"$E" mkfs --tar=i --aufs -q -U "$UUID" ref.erofs layer.tar || fail "erofskit mkfs --tar=i failed"
cmp layer.erofs ref.erofs || fail "mkfs.erofs --tar=i: not erofskit's image"
cat layer.tar >>layer.erofs
"$E" fsck -q --extract ix-out layer.erofs || fail "the indexed layer with its tar is not clean"
diff -r --no-dereference -x char -x fifo "$S" ix-out >&2 || fail "the indexed layer does not hold the tar's tree"
for opt in -p --no-sbcrc --no-preserve --no-preserve-perms --extract-xattrs; do
	refused "'${opt%%=*}'" "$FSCK" "$opt" image.img
done
for opt in -i -x; do
	refused "'${opt%%=*}'" "$DUMP" "$opt" image.img
done
refused "-s" "$DUMP" -s --path=/dir image.img
refused "-S with -s" "$DUMP" -S -s image.img
"$DUMP" -S image.img | grep -q "^Names:" || fail "dump.erofs -S gives no statistics"
refused "--ls" "$DUMP" --ls image.img
refused "--ls" "$DUMP" --ls --nid="$nid" image.img
refused "--path" "$DUMP" --path image.img --path       # a value is missing

note "-V and --help"
version=$("$E" --version | awk '{print $2}')
[ -n "$version" ] || fail "erofskit --version printed no version"
for tool in "$MKFS" "$FSCK" "$DUMP"; do
	for opt in -V --version; do
		out=$("$tool" $opt) || fail "$tool $opt failed"
		[ "$out" = "$(basename "$tool") (erofskit) $version" ] || fail "$tool $opt: '$out'"
	done
	"$tool" --help >help.out || fail "$tool --help failed"
	grep -qF "usage: $(basename "$tool")" help.out || fail "$tool --help: no usage line"
	grep -qE '^  --?[a-zA-Z]' help.out || fail "$tool --help: no options listed"
done
# Each help text goes to a file first: grep -q stops reading at its first
# match, and a tool still writing would die of SIGPIPE (pipefail).
"$MKFS" --help >help.out && grep -qF -- '--workers=N' help.out ||
	fail "mkfs.erofs --help does not list --workers"
"$FSCK" --help >help.out && grep -qF -- '--extract[=DIR]' help.out ||
	fail "fsck.erofs --help does not list --extract"
"$DUMP" --help >help.out && grep -qF -- '--path=P' help.out ||
	fail "dump.erofs --help does not list --path"
# erofskit's own name is unchanged.
"$E" mkfs --help >help.out && grep -qF "usage: erofskit mkfs" help.out ||
	fail "erofskit mkfs --help changed"

note "cmake --install with EROFSKIT_INSTALL_DROPIN_LINKS"
if [ -n "${EROFSKIT_SRC:-}" ] && command -v cmake >/dev/null; then
	for setting in ON OFF; do
		rm -rf "$T/cmake" "$T/dest"
		cmake -S "$EROFSKIT_SRC" -B "$T/cmake" -DEROFSKIT_TESTS=OFF \
			-DEROFSKIT_INSTALL_DROPIN_LINKS=$setting >cmake.log 2>&1 ||
			{ cat cmake.log >&2; fail "cmake configure ($setting)"; }
		DESTDIR=$T/dest cmake --install "$T/cmake" --component dropin --prefix /usr/local \
			>cmake.log 2>&1 || { cat cmake.log >&2; fail "cmake --install ($setting)"; }
		for n in mkfs.erofs fsck.erofs dump.erofs; do
			l=$T/dest/usr/local/bin/$n
			if [ $setting = ON ]; then
				[ -L "$l" ] && [ "$(readlink "$l")" = erofskit ] ||
					fail "EROFSKIT_INSTALL_DROPIN_LINKS=ON: no link $l -> erofskit"
			else
				[ ! -e "$l" ] && [ ! -L "$l" ] || fail "EROFSKIT_INSTALL_DROPIN_LINKS=OFF installed $l"
			fi
		done
	done
else
	note "skipped: no EROFSKIT_SRC or cmake"
fi
echo PASS

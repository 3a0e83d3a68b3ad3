# Reproducible builds and the options that rewrite metadata: the same tree
# (two separate copies, one on this disk and one on a tmpfs, so inode
# numbers, readdir order and xattr insertion order differ) gives
# byte-identical images; -U, -L, -T, --mkfs-time, SOURCE_DATE_EPOCH,
# --all-root, --force-uid and --force-gid do what mkfs --help says, seen
# through a kernel mount.  An image rebuilt in the tree it is made of
# leaves the image it replaces out.
. "$(dirname "$0")/lib.sh"

UUID=0123abcd-4567-89ef-fedc-ba9876543210
LABEL=erofskit-label
sum() { sha256sum "$1" | cut -d' ' -f1; }
sbfield() { # sbfield IMAGE KEY: one field of dump --json
	"$EROFSKIT" dump --json "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$2"
}
same_image() { # same_image A B WHAT
	cmp -s "$1" "$2" || fail "$3: images differ ($(sum "$1") vs $(sum "$2"))"
}
# add_xattr_file TREE ORDER...: one more file whose xattrs are set in the
# given order; then the root mtime is put back to a fixed value.
add_xattr_file() {
	local tree=$1 n
	shift
	echo "xattr order" >"$tree/xattr-order"
	touch -d @1500000000.5 "$tree/xattr-order"
	for n in "$@"; do setfattr -n "user.$n" -v "value of $n" "$tree/xattr-order"; done
	touch -d @1600000000.25 "$tree"
}

# --- the same tree twice -> the same bytes -------------------------------
make_fixture_tree "$T/a"
add_xattr_file "$T/a" alpha beta gamma delta
"$EROFSKIT" mkfs -q "$T/a1.img" "$T/a"
"$EROFSKIT" mkfs -q -T 1700000000 -U $UUID -L $LABEL "$T/a2.img" "$T/a"
SOURCE_DATE_EPOCH=1700000000 "$EROFSKIT" mkfs -q "$T/a3.img" "$T/a"
sleep 1    # a later wall-clock time must not matter either
mkdir "$T/fs"
mount -t tmpfs -o size=256m,mode=0755 tmpfs "$T/fs" || fail "cannot mount a tmpfs"
_mounts+=("$T/fs")
make_fixture_tree "$T/fs/b"
add_xattr_file "$T/fs/b" delta gamma beta alpha
manifest "$T/a" "$T/a.json"
manifest "$T/fs/b" "$T/b.json"
same_manifest "$T/a.json" "$T/b.json" "the two fixture trees"
# The copies really differ in what the image must not depend on.
[ "$(ls -f "$T/a/names" | tr '\n' /)" != "$(ls -f "$T/fs/b/names" | tr '\n' /)" ] ||
	fail "test setup: both trees list /names in the same order"
python3 -c 'import os,sys; sys.exit(os.listxattr(sys.argv[1]) == os.listxattr(sys.argv[2]))' \
	"$T/a/xattr-order" "$T/fs/b/xattr-order" ||
	fail "test setup: both trees list the xattrs in the same order"
"$EROFSKIT" mkfs -q "$T/b1.img" "$T/fs/b"
"$EROFSKIT" mkfs -q -T 1700000000 -U $UUID -L $LABEL "$T/b2.img" "$T/fs/b"
SOURCE_DATE_EPOCH=1700000000 "$EROFSKIT" mkfs -q "$T/b3.img" "$T/fs/b"
same_image "$T/a1.img" "$T/b1.img" "default options"
same_image "$T/a2.img" "$T/b2.img" "-T 1700000000 -U $UUID -L $LABEL"
same_image "$T/a3.img" "$T/b3.img" "SOURCE_DATE_EPOCH=1700000000"
# Building the same tree again into the same place gives it again.
"$EROFSKIT" mkfs -q "$T/a1.again.img" "$T/a"
same_image "$T/a1.img" "$T/a1.again.img" "a second build of one tree"
# The options did change the image (the comparisons above can fail).
! cmp -s "$T/a1.img" "$T/a2.img" || fail "-T/-U/-L changed nothing"

# --- -U and -L --------------------------------------------------------------
note "-U and -L"
[ "$(sbfield "$T/a2.img" uuid)" = $UUID ] || fail "-U $UUID not in dump --json: $(sbfield "$T/a2.img" uuid)"
[ "$(sbfield "$T/a2.img" label)" = $LABEL ] || fail "-L $LABEL not in dump --json: $(sbfield "$T/a2.img" label)"
"$EROFSKIT" mkfs -q -U 0123ABCD456789EFFEDCBA9876543210 "$T/upper.img" "$T/a"
[ "$(sbfield "$T/upper.img" uuid)" = $UUID ] || fail "-U without dashes, upper case, not taken"
# util-linux's blkid (what udev and mount by LABEL= use) sees them too.
blkid -p -o export "$T/a2.img" >"$T/blkid" || fail "blkid does not recognise our image"
grep -qx "TYPE=erofs" "$T/blkid" || fail "blkid: not erofs: $(cat "$T/blkid")"
grep -qx "UUID=$UUID" "$T/blkid" || fail "blkid does not see UUID $UUID: $(cat "$T/blkid")"
grep -qx "LABEL=$LABEL" "$T/blkid" || fail "blkid does not see LABEL $LABEL: $(cat "$T/blkid")"
"$EROFSKIT" mkfs -q -U random "$T/r1.img" "$T/a"
"$EROFSKIT" mkfs -q -U random "$T/r2.img" "$T/a"
u0=$(sbfield "$T/a1.img" uuid) u1=$(sbfield "$T/r1.img" uuid) u2=$(sbfield "$T/r2.img" uuid)
[ "$u1" != "$u2" ] || fail "-U random gave the same UUID twice: $u1"
[ "$u1" != "$u0" ] && [ "$u2" != "$u0" ] || fail "-U random gave the content-derived UUID"
[ "$u0" != 00000000-0000-0000-0000-000000000000 ] || fail "default UUID is all zeros"
for u in "$u1" "$u2"; do
	[[ $u =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ ]] ||
		fail "-U random gave '$u', not a version-4 UUID"
done
"$EROFSKIT" fsck -q "$T/r1.img" || fail "image with a random UUID fails fsck"

# The metadata tests use a tree without the 5 GiB sparse file (the kernel
# manifests stay fast); its manifest is the expectation.
rm "$T/fs/b/sparse/sparse-5g.bin"
manifest "$T/fs/b" "$T/src.json"

# expect MODE ARG... : the source manifest as the image should show it.
expect() {
	python3 - "$T/src.json" "$T/expect.json" "$@" <<'PY'
import json, sys
src, out, mode, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
m = json.load(open(src))
for e in m["entries"]:
    if mode == "settime":            # -T: every mtime is T exactly
        e["mtime"], e["mtime_nsec"] = int(args[0]), 0
    elif mode == "clamp":            # SOURCE_DATE_EPOCH: min(mtime, T)
        t = int(args[0])
        if e["mtime"] * 10**9 + e["mtime_nsec"] > t * 10**9:
            e["mtime"], e["mtime_nsec"] = t, 0
    elif mode == "owner":            # uid/gid "-" keeps the source's
        if args[0] != "-":
            e["uid"] = int(args[0])
        if args[1] != "-":
            e["gid"] = int(args[1])
    else:
        sys.exit("unknown mode " + mode)
json.dump(m, open(out, "w"))
PY
}
# kview IMAGE OUT: the kernel's manifest of an image.
kview() {
	kmount "$1" "$T/mnt"
	manifest "$T/mnt" "$2"
	kumount "$T/mnt"
}

note "-T"
"$EROFSKIT" mkfs -q -T 1700000000 "$T/t.img" "$T/fs/b"
[ "$(sbfield "$T/t.img" epoch)" = 1700000000 ] || fail "-T: build time is $(sbfield "$T/t.img" epoch)"
kview "$T/t.img" "$T/t.json"
expect settime 1700000000
same_manifest "$T/expect.json" "$T/t.json" "-T 1700000000: every mtime"
# A negative -T is a valid time too.
"$EROFSKIT" mkfs -q -T -86400 "$T/tneg.img" "$T/fs/b"
kview "$T/tneg.img" "$T/tneg.json"
expect settime -86400
same_manifest "$T/expect.json" "$T/tneg.json" "-T -86400: every mtime"

note "--mkfs-time"
"$EROFSKIT" mkfs -q -T 1700000000 --mkfs-time "$T/mt.img" "$T/fs/b"
[ "$(sbfield "$T/mt.img" epoch)" = 1700000000 ] || fail "--mkfs-time: build time is $(sbfield "$T/mt.img" epoch)"
kview "$T/mt.img" "$T/mt.json"
same_manifest "$T/src.json" "$T/mt.json" "-T --mkfs-time keeps every file's mtime"

note "SOURCE_DATE_EPOCH"
# 1700000000 is inside the tree's range: older mtimes stay (nanoseconds
# too), newer ones (2100, past 2^32, and 1700000000.123456789) clamp.
SOURCE_DATE_EPOCH=1700000000 "$EROFSKIT" mkfs -q "$T/sde.img" "$T/fs/b"
[ "$(sbfield "$T/sde.img" epoch)" = 1700000000 ] || fail "SOURCE_DATE_EPOCH: build time is $(sbfield "$T/sde.img" epoch)"
kview "$T/sde.img" "$T/sde.json"
expect clamp 1700000000
python3 -c 'import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); sys.exit(a == b)' \
	"$T/src.json" "$T/expect.json" || fail "SOURCE_DATE_EPOCH test clamps nothing: pick another time"
same_manifest "$T/expect.json" "$T/sde.json" "SOURCE_DATE_EPOCH=1700000000 clamps newer mtimes"
# -T wins over SOURCE_DATE_EPOCH.
SOURCE_DATE_EPOCH=1600000000 "$EROFSKIT" mkfs -q -T 1700000000 "$T/both.img" "$T/fs/b"
same_image "$T/t.img" "$T/both.img" "-T with SOURCE_DATE_EPOCH set vs -T alone"

note "--all-root, --force-uid, --force-gid"
# The tree has owners other than root (up to 123456:654321).
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); sys.exit(not any(e["uid"] or e["gid"] for e in m["entries"]))' \
	"$T/src.json" || fail "the fixture tree has no non-root owners"
"$EROFSKIT" mkfs -q --all-root "$T/root.img" "$T/fs/b"
kview "$T/root.img" "$T/root.json"
expect owner 0 0
same_manifest "$T/expect.json" "$T/root.json" "--all-root"
"$EROFSKIT" mkfs -q --force-uid 4242 --force-gid 100000 "$T/force.img" "$T/fs/b"
kview "$T/force.img" "$T/force.json"
expect owner 4242 100000
same_manifest "$T/expect.json" "$T/force.json" "--force-uid 4242 --force-gid 100000"
"$EROFSKIT" mkfs -q --force-uid 7 "$T/fuid.img" "$T/fs/b"
kview "$T/fuid.img" "$T/fuid.json"
expect owner 7 -
same_manifest "$T/expect.json" "$T/fuid.json" "--force-uid 7 alone keeps the groups"
"$EROFSKIT" mkfs -q --force-gid 8 "$T/fgid.img" "$T/fs/b"
kview "$T/fgid.img" "$T/fgid.json"
expect owner - 8
same_manifest "$T/expect.json" "$T/fgid.json" "--force-gid 8 alone keeps the owners"
# And what stat(2) itself says for one file in the mounted image.
kmount "$T/force.img" "$T/mnt"
[ "$(stat -c %u:%g "$T/mnt/owners/uid-123456")" = 4242:100000 ] ||
	fail "stat of /owners/uid-123456 under --force-uid/--force-gid: $(stat -c %u:%g "$T/mnt/owners/uid-123456")"
kumount "$T/mnt"

note "an image rebuilt inside its own tree is not its own input"
mkdir -p "$T/self/d" "$T/plain"
echo data >"$T/self/d/f"
cp -a "$T/self/d" "$T/plain/"
"$EROFSKIT" mkfs -q "$T/self/own.img" "$T/self"
touch -d @1600000000 "$T/self" "$T/plain"
"$EROFSKIT" mkfs -q "$T/self/own.img" "$T/self"     # the first one is in the tree now
"$EROFSKIT" mkfs -q "$T/plain.img" "$T/plain"
same_image "$T/plain.img" "$T/self/own.img" "the tree without its image, and the image rebuilt in it"
echo PASS

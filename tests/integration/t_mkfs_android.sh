# What Android's build passes mkfs.erofs (build_image.py): --mount-point,
# --fs-config-file (a canned fs_config), --file-contexts, --product-out
# and --block-list-file.
# - The kernel shows every file with its fs_config line's owner and
#   permission bits (type and bytes the source's) and its capabilities as
#   security.capability (a source's own replaced), the labels of the
#   file_contexts rules for /system/..., from a directory and from a tar;
#   --all-root applies after fs_config.
# - The block list names each file with blocks of its own, under
#   /system: in an uncompressed image its blocks hold the file's bytes;
#   in a compressed one the lists lie in the image and no two files
#   share a block; a file whose data is inline has no line.
# - Android's command line, verbatim, through the mkfs.erofs drop-in,
#   makes the same image and list; both fsck tools take the images.
# - -Elegacy-compress (Android's repack tools pass it): every compressed
#   file's index in the full form, the kernel reads the tree with each
#   layout, and the drop-in gives the same image; an image mkfs.erofs 1.5
#   makes with it extracts to the tree.
# - A file fs_config lacks, a malformed line, --product-out alone, and
#   --block-list-file where there is no list to write are refused (exit
#   2, nothing written); a name with white space, or a list in a missing
#   directory, fails the list and leaves the image as it was.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"
mkdir -p src/bin src/etc/init src/lib src/app/Calc
printf 'shell\n' >src/bin/sh
head -c 30000 /dev/urandom >src/bin/ping
python3 -c 'print("".join("log line %d\n" % i for i in range(6000)), end="")' >src/lib/libc.so
cp src/lib/libc.so src/app/Calc/Calc.apk
printf 'init\n' >src/etc/init/svc.rc
head -c 8192 /dev/urandom >src/etc/two-blocks
: >src/etc/empty
ln -s sh src/bin/ash
ln src/bin/ping src/app/ping-link
mknod src/etc/null c 1 3
# capabilities of the source's own: fs_config's replace them
setfattr -n security.capability -v 0x0100000201000000000000000000000000000000 src/bin/sh
setfattr -n user.note -v kept src/etc/init/svc.rc
chmod 0700 src/lib

# fs_config as Android writes it: the root a line that starts with a
# blank, paths under the mount point, selabel= words (read past),
# capabilities in hex.  Owners and modes other than the source's.
cat >fs_config <<'FC'
 0 0 755 selabel=u:object_r:rootfs:s0 capabilities=0x0
system/app 0 0 755 selabel=u:object_r:system_file:s0 capabilities=0x0
system/app/Calc 1000 1000 750 selabel=u:object_r:system_file:s0 capabilities=0x0
system/app/Calc/Calc.apk 1000 1000 644 capabilities=0x0
system/app/ping-link 0 3003 4750 capabilities=0x3000
system/bin 0 2000 751 capabilities=0x0
system/bin/ash 0 2000 777 capabilities=0x0
system/bin/ping 0 3003 4750 capabilities=0x3000
system/bin/sh 0 2000 755 capabilities=0x1000000400
system/etc 0 0 755 capabilities=0x0
system/etc/empty 0 0 600 capabilities=0x0
system/etc/init 0 0 755 capabilities=0x0
system/etc/init/svc.rc 0 0 644 capabilities=0x0
system/etc/null 0 0 666 capabilities=0x0
system/etc/two-blocks 1036 1036 640 capabilities=0x0
system/lib 0 0 755 capabilities=0x0
system/lib/libc.so 0 0 644 capabilities=0x0
FC
cat >file_contexts <<'FCX'
/system(/.*)?            u:object_r:system_file:s0
/system                  u:object_r:rootfs:s0
/system/bin/sh       --  u:object_r:shell_exec:s0
/system/etc/init(/.*)?   u:object_r:init_file:s0
FCX

# check_view DIR [all-root]: DIR (a mount) shows src with fs_config's
# attributes, the capabilities as the xattr, the labels of the rules.
check_view() {
	python3 - "$1" src fs_config "${2:-}" <<'PY' || fail "the kernel's view of $1 is not what fs_config and file_contexts give"
import os, re, stat, struct, sys
mnt, src, fsc, all_root = sys.argv[1:5]
table = {}
for line in open(fsc):
    w = line.rstrip("\n").split(" ")
    path = "" if line.startswith(" ") else w[0]
    w = w[1:] if line.startswith(" ") else w[1:]
    caps = next((int(x.split("=")[1], 0) for x in w[3:] if x.startswith("capabilities=")), 0)
    table[path] = (int(w[0]), int(w[1]), int(w[2], 8), caps)
def label(rel):
    p = "/system" + ("/" + rel if rel else "")
    if p == "/system": return "u:object_r:rootfs:s0"
    if p == "/system/bin/sh": return "u:object_r:shell_exec:s0"
    if p.startswith("/system/etc/init"): return "u:object_r:init_file:s0"
    return "u:object_r:system_file:s0"
def xattr(p, name):
    try: return os.getxattr(p, name, follow_symlinks=False)
    except OSError: return None
bad, seen = [], 0
for d, dirs, files in os.walk(src):
    for name in [""] + dirs + files:
        if name == "" and d != src:
            continue
        s = os.path.join(d, name) if name else d
        rel = os.path.relpath(s, src)
        rel = "" if rel == "." else rel
        m = os.path.join(mnt, rel) if rel else mnt
        uid, gid, mode, caps = table["system/" + rel if rel else ""]
        if all_root: uid = gid = 0
        a, b = os.lstat(s), os.lstat(m)
        if stat.S_IFMT(a.st_mode) != stat.S_IFMT(b.st_mode): bad.append((rel, "type"))
        if not stat.S_ISLNK(b.st_mode) and stat.S_IMODE(b.st_mode) != mode:
            bad.append((rel, "mode %o, want %o" % (stat.S_IMODE(b.st_mode), mode)))
        if (b.st_uid, b.st_gid) != (uid, gid):
            bad.append((rel, "owner %d:%d, want %d:%d" % (b.st_uid, b.st_gid, uid, gid)))
        want = struct.pack("<5I", 0x02000001, caps & 0xffffffff, 0, caps >> 32, 0) if caps else None
        if xattr(m, "security.capability") != want:
            bad.append((rel, "capabilities %r, want %r" % (xattr(m, "security.capability"), want)))
        if (xattr(m, "security.selinux") or b"").rstrip(b"\0").decode() != label(rel):
            bad.append((rel, "label %r" % xattr(m, "security.selinux")))
        if stat.S_ISREG(a.st_mode) and open(s, "rb").read() != open(m, "rb").read():
            bad.append((rel, "bytes"))
        if stat.S_ISLNK(a.st_mode) and os.readlink(s) != os.readlink(m):
            bad.append((rel, "link"))
        seen += 1
if xattr(os.path.join(mnt, "etc/init/svc.rc"), "user.note") != b"kept":
    bad.append(("etc/init/svc.rc", "lost user.note"))
for b in bad: print("  %s: %s" % b, file=sys.stderr)
print("%d entries checked" % seen)
sys.exit(1 if bad or seen < 15 else 0)
PY
}

# check_list LIST IMAGE plain|compressed|any: the block list's lines
# (any: files may lie in the packed inode, fragments, and have none).
check_list() {
	python3 - "$1" "$2" "$3" src "$("$E" dump --json "$2")" <<'PY' || fail "block list $1 of $2 is wrong"
import json, os, sys
lst, img, kind, src, sb = sys.argv[1:6]
bs, size = json.loads(sb)["block_size"], os.path.getsize(img)
lines = {}
for line in open(lst):
    path, *ranges = line.split()
    assert path.startswith("/system/") and path not in lines, path
    blocks = []
    for r in ranges:
        a, _, b = r.partition("-")
        a, b = int(a), int(b or a)
        assert a <= b and (b + 1) * bs <= size, (path, r)
        assert not blocks or a > blocks[-1] + 1, (path, "not ascending and merged")
        blocks += range(a, b + 1)
    lines[path] = blocks
def content(path):
    return open(os.path.join(src, path[len("/system/"):]), "rb").read()
# A block two files list holds data they share (dedupe): equal files.
owner = {}
for path, blocks in lines.items():
    for blk in blocks:
        assert blk not in owner or content(owner[blk]) == content(path), \
            ("block %d listed for %s and %s" % (blk, owner[blk], path))
        owner[blk] = path
data = open(img, "rb").read()
# A hard-linked file once, under either name; none for data inline.
want = {"/system/lib/libc.so", "/system/app/Calc/Calc.apk", "/system/etc/two-blocks"}
links = {"/system/bin/ping", "/system/app/ping-link"}
assert len(set(lines) & links) <= 1, ("a hard-linked file twice", sorted(lines))
# Without fragments, every file with a block of data has a line.
if kind != "any":
    assert set(lines) - links == want, ("listed", sorted(lines))
    assert len(set(lines) & links) == 1, ("a hard-linked file", sorted(lines))
if kind == "compressed":
    text = lines["/system/lib/libc.so"]
    assert 0 < len(text) < len(content("/system/lib/libc.so")) // bs, ("text", text)
if kind == "plain":
    for path, blocks in lines.items():
        # Every full block; the tail's too where it is not inline (a
        # chunk-based file's is not).
        want = content(path)
        got = b"".join(data[b * bs:(b + 1) * bs] for b in blocks)
        assert len(blocks) in (len(want) // bs, -(-len(want) // bs)), (path, len(blocks))
        assert got[:len(want)] == want[:len(got)], (path, "blocks do not hold its bytes")
print("%d files listed" % len(lines))
PY
}

note "a directory: fs_config, labels under /system, the block list"
"$E" mkfs -q -E^dedupe --mount-point system --fs-config-file fs_config --file-contexts file_contexts \
	--block-list-file plain.list plain.img src || fail "mkfs with the Android options failed"
kmount plain.img mt
check_view mt
kumount mt
check_list plain.list plain.img plain
"$E" fsck -q plain.img || fail "erofskit fsck rejects plain.img"
# 512-byte blocks, every file chunk-based: a line per file still, its
# chunks' blocks holding its bytes.
"$E" mkfs -q -b 512 --chunksize 4096 -E^dedupe --mount-point system --block-list-file chunks.list \
	chunks.img src || fail "mkfs --chunksize --block-list-file failed"
check_list chunks.list chunks.img plain

note "--all-root applies after fs_config"
"$E" mkfs -q --all-root --mount-point /system/ --fs-config-file fs_config --file-contexts file_contexts \
	root.img src || fail "mkfs --all-root --fs-config-file failed"
kmount root.img mt
check_view mt all-root
kumount mt

note "compressed, from a tar: the same view; the list in the image, no block twice"
tar --format=posix --sort=name --xattrs --xattrs-include='*' -C src -cf src.tar .
for spec in "-zlz4hc -Eztailpacking" "-zlzma -C65536 -Efragments"; do
	"$E" mkfs -q --tar $spec --mount-point system --fs-config-file fs_config \
		--file-contexts file_contexts --block-list-file z.list z.img src.tar ||
		fail "mkfs --tar $spec with the Android options failed"
	kmount z.img mt
	check_view mt
	kumount mt
	"$E" fsck -q z.img || fail "erofskit fsck rejects $spec"
done
# lz4hc with tail packing (no fragments or dedupe: Debian's fsck.erofs
# 1.5 reads it); the text compresses into fewer blocks.
"$E" mkfs -q -zlz4hc -Eztailpacking,^fragments,^dedupe --mount-point system --fs-config-file fs_config \
	--file-contexts file_contexts --block-list-file z.list z.img src || fail "mkfs -zlz4hc"
fsck.erofs z.img >/dev/null 2>&1 || fail "fsck.erofs 1.5 rejects the -zlz4hc image"
check_list z.list z.img compressed

note "Android's command line through the mkfs.erofs drop-in: the same image and list"
mkdir -p out
"$EROFSKIT_BUILD/dropin/mkfs.erofs" -z lz4hc -b 4096 --mount-point system --product-out out \
	--fs-config-file fs_config --file-contexts file_contexts -T 1230768000 \
	-U 6e3a0f5c-9d1b-4d0a-8a4e-2f6b1c7d9e10 --block-list-file drop.list -C 65536 \
	drop.img src >/dev/null || fail "the drop-in with Android's options failed"
"$E" mkfs -q -zlz4hc -C65536 -T 1230768000 -U 6e3a0f5c-9d1b-4d0a-8a4e-2f6b1c7d9e10 \
	--mount-point system --fs-config-file fs_config --file-contexts file_contexts \
	--block-list-file own.list own.img src || fail "mkfs with the same options failed"
cmp drop.img own.img || fail "the drop-in's image differs"
cmp drop.list own.list || fail "the drop-in's block list differs"
check_list own.list own.img any
kmount drop.img mt
check_view mt
kumount mt

note "-Elegacy-compress: full indexes only, whatever the layout"
make_compact_tree tree tree.json
# layouts IMAGE: how many regular files take each layout ("compressed
# full 12 plain 3 ..."), from dump --stats (one process: a dump per file
# took minutes in the sanitized build).
layouts() {
	"$E" dump --stats --json "$1" | python3 -c '
import json, sys
print(" ".join("%s %d" % kv for kv in sorted(json.load(sys.stdin)["layouts"].items()) if kv[1]))'
}
for spec in "-zlz4hc -E^fragments,^dedupe,^ztailpacking" "-zlz4 -C65536" \
	"-zlzma -C65536 -Efragments,dedupe,48bit" "-zzstd -Eztailpacking"; do
	"$E" mkfs -q $spec -Elegacy-compress legacy.img tree || fail "mkfs $spec -Elegacy-compress"
	"$E" fsck -q legacy.img || fail "erofskit fsck rejects $spec -Elegacy-compress"
	kernel_check legacy.img tree.json "$spec -Elegacy-compress"
	seen=$(layouts legacy.img) || fail "dump of $spec -Elegacy-compress"
	case $seen in
	*compact*) fail "$spec -Elegacy-compress: a compact index ($seen)" ;;
	*"compressed full"*) ;;
	*) fail "$spec -Elegacy-compress: no compressed file ($seen)" ;;
	esac
done
# Without it the same files take compact indexes: the check can fail.
"$E" mkfs -q -zlz4hc -E^fragments,^dedupe,^ztailpacking compact.img tree
seen=$(layouts compact.img) || fail "dump of compact.img"
case $seen in *compact*) ;; *) fail "no compact index without -Elegacy-compress ($seen)" ;; esac
"$E" mkfs -q -zlz4hc -E^fragments,^dedupe,^ztailpacking,legacy-compress legacy.img tree
fsck.erofs legacy.img >/dev/null 2>&1 || fail "fsck.erofs 1.5 rejects the -Elegacy-compress image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -Elegacy-compress -zlz4hc drop.img tree ||
	fail "the drop-in refuses -Elegacy-compress"
"$E" mkfs -q -zlz4hc -Elegacy-compress own.img tree
cmp drop.img own.img || fail "the drop-in's -Elegacy-compress image differs"
# (1.5 takes the smaller tree: the fixture tree's is past it.)
manifest src src.json
mkfs.erofs -Elegacy-compress -zlz4hc up.img src >/dev/null 2>&1 || fail "mkfs.erofs 1.5 -Elegacy-compress"
seen=$(layouts up.img) || fail "dump of mkfs.erofs 1.5's image"
case $seen in *compact* | "") fail "mkfs.erofs 1.5 -Elegacy-compress: $seen" ;; esac
extract_check up.img src.json "mkfs.erofs 1.5 -Elegacy-compress"

note "refused: a file fs_config lacks, a bad line, --product-out alone, no list to write"
grep -v "^system/etc/empty " fs_config >short
mkfs_refused "/etc/empty: no entry in short (looked up as 'system/etc/empty')" \
	--mount-point system --fs-config-file short
printf ' 0 0 755\nsystem/bin 0 2000 0891\n' >bad
mkfs_refused "bad:2: system/bin: bad mode" --fs-config-file bad
mkfs_refused "--product-out is read only with --fs-config-file" --product-out out
mkfs_refused "not with --tar=i" --tar=i --block-list-file x.list
[ ! -e x.list ] || fail "a block list was written"
rm -f bad.img
expect_exit 2 "$E" mkfs -q --tar --fs-config-file short --mount-point system bad.img src.tar 2>err.txt
grep -qF "no entry in short" err.txt || fail "mkfs --tar: $(cat err.txt)"
[ ! -e bad.img ] || fail "mkfs --tar with a short fs_config wrote an image"
# Without the mount point the paths are the image's own: fs_config's
# system/... lines name nothing.
mkfs_refused "/: no entry in" --fs-config-file <(sed 's/^ 0 0 755.*//' fs_config)

note "a list that cannot be written leaves the image as it was"
# The image and its list appear together or not at all: an image of
# the same name from before stays, byte for byte, and no temporary file
# is left beside either.
mkdir -p sp && cp -a src/bin sp/ && head -c 9000 /dev/urandom >"sp/bin/a b"
"$E" mkfs -q sp.img src || fail "mkfs of the image to keep"
cp sp.img sp.before
expect_exit 2 "$E" mkfs -q --block-list-file sp.list sp.img sp 2>err.txt
grep -qF "/bin/a b: a name with white space" err.txt || fail "white space: $(cat err.txt)"
grep -qF "the image was not written" err.txt || fail "white space, the image: $(cat err.txt)"
[ ! -e sp.list ] || fail "a block list was written for a name with white space"
cmp -s sp.img sp.before || fail "a list that failed replaced the image"
expect_exit 2 "$E" mkfs -q --block-list-file no/such/dir/x.list new.img src 2>err.txt
grep -qF "no/such/dir/x.list" err.txt || fail "a list in a missing directory: $(cat err.txt)"
[ ! -e new.img ] || fail "an image was written beside a list that could not be"
mkdir dir.img
expect_exit 2 "$E" mkfs -q --block-list-file d.list dir.img src 2>err.txt
grep -qF "dir.img exists and is not a regular file" err.txt || fail "IMAGE a directory: $(cat err.txt)"
[ ! -e d.list ] || fail "a block list was written for an image that could not be"
left=$(ls -d sp.list.* sp.img.* new.img.* dir.img.* 2>/dev/null) &&
	fail "temporary files were left: $left"
true

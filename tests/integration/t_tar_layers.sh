# Container layers: tars with whiteouts (.wh.NAME, .wh..wh..opq) made into
# images with --aufs, stacked with the kernel's overlayfs, must show the
# tree that applying the tars in order gives (a whiteout deletes, an opaque
# directory hides what the layers below hold).  Without --aufs the .wh.
# names are plain files.  --ovlfs-strip leaves no whiteout, opaque
# marker or overlay xattr.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"

# layer 1: the base
mkdir -p l1/etc/app l1/usr/lib/old l1/var/cache
echo base >l1/etc/app/conf
echo keep >l1/etc/keep
echo lib >l1/usr/lib/old/lib.so
echo tmp >l1/var/cache/a && echo tmp2 >l1/var/cache/b
ln -s conf l1/etc/app/link
# layer 2: deletes a file and a directory, replaces /var/cache's contents,
# changes a file
mkdir -p l2/etc/app l2/usr/lib l2/var/cache
echo changed >l2/etc/app/conf
: >l2/etc/.wh.keep
: >l2/usr/lib/.wh.old
: >l2/var/cache/.wh..wh..opq
echo fresh >l2/var/cache/c
# layer 3: brings back a deleted name as a directory, whites out a symlink
mkdir -p l3/etc/keep l3/etc/app
echo again >l3/etc/keep/inside
: >l3/etc/app/.wh.link
for i in 1 2 3; do
	tar -C "l$i" --owner=0 --group=0 -cf "l$i.tar" .
	gzip -n <"l$i.tar" >"l$i.tar.gz"
	"$E" mkfs --tar --aufs -q "l$i.erofs" "l$i.tar.gz" || fail "mkfs --tar --aufs of layer $i failed"
	"$E" fsck -q "l$i.erofs" || fail "layer $i's image is not clean"
done

note "a whiteout is a 0:0 character device, an opaque directory has its xattr"
kmount l2.erofs m2
[ -c m2/etc/keep ] && [ "$(stat -c %t:%T m2/etc/keep)" = 0:0 ] ||
	fail "etc/keep in layer 2 is not a 0:0 character device: $(stat -c %F m2/etc/keep)"
[ "$(getfattr --only-values -n trusted.overlay.opaque m2/var/cache 2>/dev/null)" = y ] ||
	fail "var/cache in layer 2 is not opaque"
[ ! -e m2/var/cache/.wh..wh..opq ] && [ ! -e m2/etc/.wh.keep ] ||
	fail "the .wh. entries themselves are in the image"
kumount m2

note "the images stacked with overlayfs equal the tars applied in order"
mkdir -p want
for i in 1 2 3; do
	python3 - "l$i" want <<'PY'
# Apply one layer as its whiteouts mean: remove what they name, empty an
# opaque directory, then copy the layer's other entries over.
import os, shutil, sys
layer, root = sys.argv[1], sys.argv[2]
def rm(p):
    if os.path.isdir(p) and not os.path.islink(p):
        shutil.rmtree(p)
    elif os.path.lexists(p):
        os.unlink(p)
for d, dirs, files in os.walk(layer):
    rel = os.path.relpath(d, layer)
    for f in files:
        if f == ".wh..wh..opq":
            t = os.path.join(root, rel)
            if os.path.isdir(t):
                for x in os.listdir(t):
                    rm(os.path.join(t, x))
        elif f.startswith(".wh."):
            rm(os.path.join(root, rel, f[4:]))
for d, dirs, files in os.walk(layer):
    rel = os.path.relpath(d, layer)
    os.makedirs(os.path.join(root, rel), exist_ok=True)
    for f in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
        if f.startswith(".wh."):
            continue
        t = os.path.join(root, rel, f)
        rm(t)
        s = os.path.join(d, f)
        if os.path.islink(s):
            os.symlink(os.readlink(s), t)
        else:
            shutil.copy2(s, t)
PY
done
for i in 1 2 3; do kmount "l$i.erofs" "m$i"; done
mkdir -p merged
mount -t overlay overlay -o "lowerdir=$T/m3:$T/m2:$T/m1" "$T/merged" ||
	fail "overlayfs refused the stacked images"
_mounts=("$T/merged" "${_mounts[@]}")
( cd want && find . -mindepth 1 | sort ) >want.list
( cd merged && find . -mindepth 1 | sort ) >got.list
diff want.list got.list || fail "the stacked images list other names than the applied tars"
while read -r p; do
	if [ -L "want/$p" ]; then
		[ "$(readlink "want/$p")" = "$(readlink "merged/$p")" ] || fail "$p: another link target"
	elif [ -f "want/$p" ]; then
		cmp "want/$p" "merged/$p" || fail "$p: other contents"
	fi
done <want.list
[ "$(cat merged/etc/app/conf)" = changed ] || fail "etc/app/conf is not layer 2's"
[ ! -e merged/usr/lib/old ] || fail "usr/lib/old was not deleted"
[ "$(ls merged/var/cache)" = c ] || fail "var/cache shows the layers below its opaque one"
[ -d merged/etc/keep ] || fail "etc/keep did not come back as a directory"
umount "$T/merged"

note "without --aufs the .wh. names are files"
"$E" mkfs --tar -q plain.erofs l2.tar || fail "mkfs --tar without --aufs failed"
kmount plain.erofs mp
[ -f mp/etc/.wh.keep ] && [ -f mp/var/cache/.wh..wh..opq ] ||
	fail "without --aufs the whiteout files are not kept as they are"
kumount mp

note "--ovlfs-strip: no whiteout, opaque marker or overlay xattr is left"
# A layer as an overlayfs upper directory holds it: a 0:0 device for a
# deleted name, trusted.overlay.* xattrs.  Added to layer 2's tar (whose
# .wh. names --aufs reads): a name that a later whiteout of the same
# archive deletes, such a device, and the xattrs (user.* ones stay).
mkdir -p s/etc/app s/dir
echo soon-gone >s/etc/app/gone
mknod s/etc/upper-whiteout c 0 0
echo kept >s/dir/file
setfattr -n trusted.overlay.opaque -v y s/dir
setfattr -n trusted.overlay.origin -v somewhere s/dir/file
setfattr -n user.note -v stays s/dir/file
: >s/etc/app/.wh.gone
tar -C l2 --owner=0 --group=0 --format=posix -cf strip.tar .
tar -C s --owner=0 --group=0 --format=posix --xattrs --xattrs-include='*' -rf strip.tar \
	./etc/app/gone ./etc/upper-whiteout ./dir ./etc/app/.wh.gone
"$E" mkfs --tar --aufs --ovlfs-strip -q strip.erofs strip.tar || fail "mkfs --ovlfs-strip failed"
"$E" mkfs --tar --aufs -q kept.erofs strip.tar || fail "mkfs --tar --aufs of the same tar failed"
"$E" fsck -q strip.erofs || fail "the stripped image is not clean"
kmount kept.erofs mk
kmount strip.erofs ms
# What stripping takes away is there without it (the checks can fail).
[ -c mk/etc/keep ] && [ -c mk/etc/upper-whiteout ] && [ -c mk/etc/app/gone ] ||
	fail "without --ovlfs-strip the whiteouts are not devices"
getfattr -n trusted.overlay.opaque mk/var/cache >/dev/null 2>&1 &&
	getfattr -n trusted.overlay.opaque mk/dir >/dev/null 2>&1 &&
	getfattr -n trusted.overlay.origin mk/dir/file >/dev/null 2>&1 ||
	fail "without --ovlfs-strip the overlay xattrs are not there"
for p in etc/keep etc/upper-whiteout etc/app/gone usr/lib/old; do
	[ ! -e "ms/$p" ] && [ ! -L "ms/$p" ] || fail "--ovlfs-strip left $p"
done
[ -z "$(getfattr -d -m '^trusted\.overlay\.' ms/var/cache ms/dir ms/dir/file 2>/dev/null)" ] ||
	fail "--ovlfs-strip left overlay xattrs: $(getfattr -d -m '^trusted' ms/var/cache ms/dir ms/dir/file)"
[ "$(getfattr --only-values -n user.note ms/dir/file)" = stays ] || fail "user.note went too"
[ "$(cat ms/etc/app/conf)" = changed ] && [ "$(cat ms/var/cache/c)" = fresh ] &&
	[ "$(cat ms/dir/file)" = kept ] || fail "--ovlfs-strip lost a file's data"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --tar=f --aufs --ovlfs-strip=1 --quiet drop.erofs <strip.tar ||
	fail "mkfs.erofs --ovlfs-strip=1 (drop-in) failed"
cmp drop.erofs strip.erofs || fail "the drop-in's --ovlfs-strip=1 is another image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --tar=f --aufs --ovlfs-strip=0 --quiet drop0.erofs <strip.tar ||
	fail "mkfs.erofs --ovlfs-strip=0 (drop-in) failed"
cmp drop0.erofs kept.erofs || fail "the drop-in's --ovlfs-strip=0 is not the default"
mkdir -p plain-dir
expect_exit 2 "$E" mkfs -q --ovlfs-strip dir.erofs plain-dir
echo PASS

# mkfs --file-contexts FILE (mkfs.erofs's): SELinux labels from
# file_contexts rules, looked up by libselinux for each file's path in the
# image and its type.
# - Every inode's security.selinux is the one Debian's mkfs.erofs 1.5
#   gives with the same rules (both read through the kernel), and the
#   rest of the tree is the same too: type-specific rules (-d, --, -l),
#   a specific rule over a general one, <<none>>, a hard link, the root; a
#   source label a rule matches is replaced, one no rule matches goes.
# - Compressed, with the labels shared (-zlz4hc, no fragments: 1.5
#   reads none), the kernel reads the same; erofskit fsck and fsck.erofs
#   1.5 take both images; the drop-in passes the option on for the same
#   image.
# - From a tar (--tar, --tar=i) and an OCI image, the same labels: the archive's own
#   security.selinux is replaced as the source's is; directories the
#   archive only implies are labelled by their paths too.
# - A missing or malformed rules file and --no-xattrs are refused (exit
#   2, nothing written).
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"
mkdir -p src/bin src/etc/init src/lib/modules src/data src/dev
printf 'shell\n' >src/bin/sh
printf 'tool\n' >src/bin/tool
ln -s sh src/bin/ash
printf 'root:x:0:0\n' >src/etc/passwd
printf 'svc\n' >src/etc/init/svc.rc
printf 'lib\n' >src/lib/libc.so
printf 'mod\n' >src/lib/modules/m.ko
printf 'data\n' >src/data/file
ln src/bin/tool src/data/tool-link
mknod src/dev/null c 1 3
setfattr -n user.note -v kept src/etc/passwd
# labels of the source's own: one a rule replaces, one no rule matches
setfattr -n security.selinux -v u:object_r:source_label:s0 src/lib/libc.so
setfattr -n security.selinux -v u:object_r:source_dir:s0 src/data
cat >file_contexts <<'FC'
/                     u:object_r:rootfs:s0
/bin(/.*)?            u:object_r:system_file:s0
/bin/sh           --  u:object_r:shell_exec:s0
/bin/.*           -l  u:object_r:link_file:s0
/etc(/.*)?            u:object_r:etc_file:s0
/etc/init     -d      u:object_r:init_dir:s0
/etc/init/.*\.rc      u:object_r:init_rc:s0
/lib/.*\.so           u:object_r:lib_file:s0
/lib/modules(/.*)?    <<none>>
/dev(/.*)?            u:object_r:device:s0
/data/tool-link       u:object_r:tool_exec:s0
FC

# labels DIR: "PATH LABEL" for every entry (LABEL "-" for none).
labels() {
	python3 - "$1" <<'PY'
import os, sys
root = sys.argv[1]
for d, dirs, files in sorted(os.walk(root)):
    for p in [d] + sorted(os.path.join(d, n) for n in files + dirs if os.path.islink(os.path.join(d, n)) or not os.path.isdir(os.path.join(d, n))):
        try:
            v = os.getxattr(p, "security.selinux", follow_symlinks=False).decode()
        except OSError:
            v = "-"
        print("/" + os.path.relpath(p, root).lstrip("."), v)
PY
}

# has_labels FILE WHAT "PATH LABEL"...: each is a line of FILE.
has_labels() {
	local file=$1 what=$2 want
	shift 2
	for want in "$@"; do
		grep -qxF "$want" "$file" || fail "$what: expected '$want' among the labels: $(cat "$file")"
	done
}

note "every label is the one mkfs.erofs 1.5 gives, and so is the rest"
"$E" mkfs -q --file-contexts file_contexts ours.img src || fail "mkfs --file-contexts failed"
mkfs.erofs --file-contexts=file_contexts theirs.img src >/dev/null 2>&1 ||
	fail "mkfs.erofs 1.5 --file-contexts failed"
kmount theirs.img mt
labels mt >theirs.txt
manifest mt theirs.json
kmount ours.img mo
labels mo >ours.txt
diff theirs.txt ours.txt >&2 || fail "the labels differ from mkfs.erofs 1.5's"
tree_is mo theirs.json "mkfs --file-contexts against mkfs.erofs 1.5"
kumount mo
kumount mt
# The rules matter (so the comparison can fail): what they give.
has_labels ours.txt "from a directory" "/bin/sh u:object_r:shell_exec:s0" \
	"/bin/ash u:object_r:link_file:s0" "/etc/init u:object_r:init_dir:s0" \
	"/lib/libc.so u:object_r:lib_file:s0" "/lib/modules/m.ko -" "/data -" "/ u:object_r:rootfs:s0"
grep -qxF "/data/tool-link u:object_r:system_file:s0" ours.txt ||
	fail "a hard link's inode takes its first path's label"

note "compressed, labels shared: the kernel reads the same; both fsck tools take it"
"$E" mkfs -q -zlz4hc -E^fragments,^dedupe --xattr-share 1 --file-contexts file_contexts z.img src ||
	fail "mkfs -zlz4hc --file-contexts failed"
kernel_check z.img theirs.json "mkfs -zlz4hc --file-contexts"
for img in ours.img z.img; do
	"$E" fsck -q $img || fail "erofskit fsck rejects $img"
	fsck.erofs $img >/dev/null 2>&1 || fail "fsck.erofs 1.5 rejects $img"
done

note "the drop-in name takes it, for the same image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --file-contexts=file_contexts drop.img src ||
	fail "mkfs.erofs (drop-in) --file-contexts failed"
cmp drop.img ours.img || fail "the drop-in's image differs from erofskit mkfs's"

note "from a tar, --tar=i and --oci: the same labels, the archive's own replaced; implied directories"
# GNU tar carries the source's own labels (SCHILY.xattr): replaced or
# dropped as from the directory.  In name order, so that the hard link's
# first path is the directory scan's (the inode takes its label).
tar --format=posix --sort=name --xattrs --xattrs-include='*' -C src -cf src.tar .
"$E" mkfs -q --tar --file-contexts file_contexts tar.img src.tar || fail "mkfs --tar --file-contexts failed"
"$E" mkfs -q --tar=i --file-contexts file_contexts ix.img src.tar ||
	fail "mkfs --tar=i --file-contexts failed"
cat ix.img src.tar >ix-whole.img
# An OCI image of two layers, the second writing three files again.
tar --format=posix -C src --no-recursion -cf files.tar bin/sh etc/init/svc.rc lib/modules/m.ko
python3 "$HERE/oci_layout.py" fromtars oci v1 src.tar files.tar >/dev/null || fail "oci_layout.py"
"$E" mkfs -q --oci oci:v1 --file-contexts file_contexts oci.img || fail "mkfs --oci --file-contexts failed"
for img in tar.img ix-whole.img oci.img; do
	kmount $img mt
	labels mt >tar.txt
	tree_is mt theirs.json "mkfs --tar --file-contexts ($img)"
	kumount mt
	diff ours.txt tar.txt >&2 || fail "$img: the labels differ from the directory's"
done
# Only files: every directory on their way is made, and labelled by its
# path (the root's by "/"); the drop-in passes the option on.
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --tar=f --quiet --file-contexts=file_contexts files.img files.tar ||
	fail "mkfs.erofs (drop-in) --tar=f --file-contexts failed"
kmount files.img mt
labels mt >files.txt
kumount mt
has_labels files.txt "implied directories" "/ u:object_r:rootfs:s0" \
	"/bin u:object_r:system_file:s0" "/bin/sh u:object_r:shell_exec:s0" \
	"/etc/init u:object_r:init_dir:s0" "/etc/init/svc.rc u:object_r:init_rc:s0" \
	"/lib/modules -" "/lib/modules/m.ko -"

note "refused: a missing or malformed rules file, --no-xattrs"
mkfs_refused "missing.fc: libselinux cannot read it" --file-contexts missing.fc
printf '/a b c d e\n' >bad.fc
mkfs_refused "bad.fc: libselinux cannot read it" --file-contexts bad.fc
mkfs_refused "not without xattrs" --no-xattrs --file-contexts file_contexts
echo PASS

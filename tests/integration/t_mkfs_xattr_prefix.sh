# mkfs --xattr-prefix PREFIX (mkfs.erofs's): long xattr name prefixes.
# - Every xattr reads back whole through the kernel and through erofskit
#   (fsck --extract), wherever the prefix table lies: in the packed
#   inode's data (fragments), after the superblock (no packed inode,
#   compat plain_xattr_pfx) and beside a metabox; from a directory and
#   from a tar; shared and inline entries alike.
# - An xattr stores only what follows its longest prefix: the inodes'
#   xattr areas shrink by the infix, and ACL and unprefixed names stay.
# - dump lists the prefixes; --workers 1 and 2 and the drop-in name give
#   the same bytes.
# - Refused: a prefix without a built-in one or with nothing after it, an
#   ACL's, one given twice, 129 of them, --no-xattrs.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"
# Overlay xattrs on every file (metacopy shared, redirect inline), user
# xattrs under nested prefixes, an ACL and a security label.
mkdir -p src/layer/sub
for i in $(seq 1 40); do
	f=src/layer/f$i
	printf 'file %d\n' "$i" >"$f"
	setfattr -n trusted.overlay.metacopy -v "" "$f"
	setfattr -n trusted.overlay.redirect -v "/lower/path/of/file/$i" "$f"
	setfattr -n user.app.cache.key -v "k$i" "$f"
done
setfattr -n user.app.other -v o src/layer/f1
setfattr -n trusted.overlay.opaque -v y src/layer/sub
setfattr -n security.selinux -v "system_u:object_r:usr_t:s0" src/layer/sub
setfattr -n user.unprefixed -v u src/layer/sub
setfacl -m u:1234:r src/layer/f2
manifest src tree.json
PREFIXES=(--xattr-prefix trusted.overlay. --xattr-prefix user.app. --xattr-prefix user.app.cache.)

# xattr_size IMAGE PATH: the bytes of PATH's xattr area.
xattr_size() {
	"$E" dump --json --path "$2" "$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["xattr_size"])'
}

note "every xattr reads back, wherever the table lies"
# options, and whether the table lies after the superblock (plain)
for setting in "-E^fragments plain" "-zlz4hc packed" "-zlz4hc,12 -E^fragments,ztailpacking plain" \
	"-zzstd -m4096 plain" "-zlzma -Eall-fragments packed"; do
	opts=${setting% *} where=${setting##* }
	# shellcheck disable=SC2086
	"$E" mkfs -q $opts "${PREFIXES[@]}" img src || fail "mkfs $opts --xattr-prefix failed"
	"$E" dump img >sb.txt
	grep -q "^Features:.*xattr_prefixes" sb.txt || fail "$opts: no xattr_prefixes feature: $(cat sb.txt)"
	if [ "$where" = plain ]; then
		grep -q "^Features:.*plain_xattr_pfx" sb.txt || fail "$opts: the table is not after the superblock"
	else
		grep -q "^Features:.*plain_xattr_pfx" sb.txt && fail "$opts: the table is not in the packed inode"
		grep -q "^Packed nid:" sb.txt || fail "$opts: no packed inode: $(cat sb.txt)"
	fi
	"$E" fsck -q img || fail "erofskit fsck rejects $opts --xattr-prefix"
	kernel_check img tree.json "mkfs $opts --xattr-prefix"
	extract_check img tree.json "mkfs $opts --xattr-prefix"
done

note "an xattr keeps only what follows its longest prefix"
"$E" mkfs -q -E^fragments "${PREFIXES[@]}" with.img src || fail "mkfs with prefixes failed"
"$E" mkfs -q -E^fragments without.img src || fail "mkfs without prefixes failed"
# f3: trusted.overlay.redirect inline (8 bytes of infix saved, "overlay.")
# and user.app.cache.key (10: "app.cache."); metacopy is shared (its
# 4-byte id either way).  sub: opaque saves 8, the label and
# user.unprefixed nothing.
for want in "/layer/f3 16" "/layer/sub 8" "/layer 0"; do
	path=${want% *} saved=${want#* }
	a=$(xattr_size without.img "$path") b=$(xattr_size with.img "$path")
	# entries are padded to 4 bytes: at least the saving less 3 per entry
	[ $((a - b)) -ge $((saved - 6)) ] && [ $((a - b)) -le "$saved" ] ||
		fail "$path: xattr area $a bytes without prefixes, $b with (want about $saved fewer)"
done
[ "$(stat -c %s with.img)" -le "$(stat -c %s without.img)" ] || fail "the prefixes made the image bigger"
"$E" dump --json with.img | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["xattr_prefixes"] == ["trusted.overlay.", "user.app.", "user.app.cache."], d["xattr_prefixes"]' ||
	fail "dump --json does not list the prefixes"
"$E" dump with.img | grep -q "^Xattr prefixes: *trusted.overlay. (0)$" || fail "dump does not list the prefixes"

note "from a tar; workers and the drop-in give the same bytes"
tar --format=posix --xattrs --xattrs-include='*' --acls -C src -cf src.tar .
"$E" mkfs -q --tar -zlz4hc "${PREFIXES[@]}" tar.img src.tar || fail "mkfs --tar --xattr-prefix failed"
kernel_check tar.img tree.json "mkfs --tar --xattr-prefix"
"$E" mkfs -q -zlz4hc --workers 1 "${PREFIXES[@]}" w1.img src
"$E" mkfs -q -zlz4hc --workers 2 "${PREFIXES[@]}" w2.img src
cmp w1.img w2.img || fail "--workers 1 and 2 differ with --xattr-prefix"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet -zlz4hc --xattr-prefix=trusted.overlay. \
	--xattr-prefix=user.app. --xattr-prefix=user.app.cache. drop.img src ||
	fail "mkfs.erofs (drop-in) --xattr-prefix= failed"
cmp drop.img w2.img || fail "the drop-in's image differs"

note "refused: no built-in prefix, nothing after it, an ACL's, twice, 129, --no-xattrs"
mkfs_refused "--xattr-prefix 'overlay.': it must start with" --xattr-prefix overlay.
mkfs_refused "--xattr-prefix 'user.': it must start with" --xattr-prefix user.
mkfs_refused "--xattr-prefix 'system.posix_acl_access': it must start with" \
	--xattr-prefix system.posix_acl_access
mkfs_refused "--xattr-prefix 'user.a.' given twice" --xattr-prefix user.a. --xattr-prefix user.a.
many=()
for i in $(seq 0 128); do many+=(--xattr-prefix "user.p$i."); done
mkfs_refused "129 --xattr-prefix: at most 128" "${many[@]}"
mkfs_refused "--xattr-prefix names xattrs: not without them" --no-xattrs --xattr-prefix user.a.
echo PASS

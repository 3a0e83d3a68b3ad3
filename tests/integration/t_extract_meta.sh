# Extraction gives every file its own owner and mode whatever the target
# directory and the umask would give a new file: fsck skips chown/chmod
# only when creation already produced the right ones, and must notice when
# it cannot (a set-group-ID target of another group, a strict umask).
. "$(dirname "$0")/lib.sh"

src=$T/src
mkdir -p "$src/d"
for m in 0644 0664 0666 0600 0755 0777 0444 0000 2755 4755 1777; do
	printf 'mode %s\n' "$m" > "$src/f$m"
	chmod "$m" "$src/f$m"
	printf 'in d %s\n' "$m" > "$src/d/f$m"
	chmod "$m" "$src/d/f$m"
done
printf 'read-only, with a user xattr\n' > "$src/d/ro-xattr"
setfattr -n user.note -v kept "$src/d/ro-xattr"
chmod 0444 "$src/d/ro-xattr"
printf 'owned\n' > "$src/d/owned"
chown 1234:5678 "$src/d/owned"
printf 'root\n' > "$src/d/rootgrp"
chown 0:0 "$src/d/rootgrp"
# Directories and symlinks get their owners by the path calls, not
# through a descriptor: the same skipping applies to them.
mkdir "$src/d/owned-dir"
chown 1234:5678 "$src/d/owned-dir"
ln -s owned "$src/d/owned-link"
chown -h 1234:5678 "$src/d/owned-link"
ln -s rootgrp "$src/d/root-link"
manifest "$src" "$T/src.json"
"$EROFSKIT" mkfs -q -zlz4hc -C16384 "$T/img" "$src"

check_into() {   # label umask target-preparation
	local out=$T/out.$1
	mkdir -p "$out"
	eval "$3"
	(umask "$2" && "$EROFSKIT" fsck --extract "$out/x" "$T/img") ||
		fail "$1: fsck --extract failed"
	manifest "$out/x" "$T/$1.json"
	same_manifest "$T/src.json" "$T/$1.json" "extraction ($1)"
}
check_into plain 022 ":"
check_into strict-umask 077 ":"
check_into no-umask 000 ":"
# A set-group-ID directory of another group hands its group to new files.
check_into setgid-target 022 'mkdir -p "$out/x" && chgrp 4321 "$out/x" && chmod 2775 "$out/x"'
# Not set-group-ID, but another group: still ours for new files, yet the
# root's group is not ours, so nothing is assumed.
check_into other-group-target 022 'mkdir -p "$out/x" && chgrp 4321 "$out/x" && chmod 0775 "$out/x"'
# Directories already in the target are reused, even without
# --overwrite: one of another owner, and one set-group-ID of another
# group (whose new files get that group), must still end up as the image
# says, and so must what is created in them.
check_into existing-dirs 022 'mkdir -p "$out/x/d/owned-dir" && chown 777:777 "$out/x/d/owned-dir" && chgrp 4321 "$out/x/d" && chmod 2775 "$out/x/d"'
# As another user (not root, so no owners): modes still exact.
if command -v setpriv >/dev/null; then
	user_tool=$(user_erofskit)
	for um in 022 027; do
		out=$T/out.user$um
		mkdir -p "$out" && chown 4242:4242 "$out"
		setpriv --reuid 4242 --regid 4242 --clear-groups sh -c \
			"umask $um && '$user_tool' fsck --extract '$out/x' '$T/img'" >/dev/null ||
			fail "fsck --extract as uid 4242 (umask $um) failed"
		for m in 0644 0666 0000 0755 2755; do
			got=$(stat -c %a "$out/x/d/f$m")
			[ "$got" = "$(printf %o $((8#$m)))" ] ||
				fail "as uid 4242 (umask $um): d/f$m has mode $got"
		done
		[ "$(stat -c %u:%g "$out/x/d/owned")" = 4242:4242 ] ||
			fail "as uid 4242: d/owned is not ours"
		[ "$(getfattr --only-values -n user.note "$out/x/d/ro-xattr" 2>/dev/null)" = kept ] ||
			fail "as uid 4242 (umask $um): the user xattr of a read-only file was lost"
		[ "$(stat -c %a "$out/x/d/ro-xattr")" = 444 ] ||
			fail "as uid 4242 (umask $um): d/ro-xattr has mode $(stat -c %a "$out/x/d/ro-xattr")"
	done
fi
echo PASS

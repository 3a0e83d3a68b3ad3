# mkfs failures: an unreadable source file, a full disk, a file that changes
# while it is read, a missing source directory.  Each must fail with a
# non-zero exit and a message naming the culprit, and must leave no IMAGE
# and no IMAGE.tmp.* behind; an IMAGE that existed before a failed build
# stays exactly as it was.
. "$(dirname "$0")/lib.sh"

NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
USER_EROFSKIT=$(user_erofskit)  # $T is 0755 now: the unprivileged user reaches the trees

# only_files DIR NAME...: DIR holds exactly these names (no IMAGE.tmp.*).
only_files() {
	local dir=$1 got want
	shift
	got=$(cd "$dir" && LC_ALL=C ls -A | tr '\n' ' ')
	want=$(printf '%s\n' "$@" | LC_ALL=C sort | grep -v '^$' | tr '\n' ' ' || true)
	[ "$got" = "$want" ] || fail "$dir holds '$got', expected '$want'"
}
# mkfs_fails LOG CMD...: the build must fail (non-zero, not a crash).
mkfs_fails() {
	local log=$1 rc=0
	shift
	"$@" >"$log.out" 2>"$log" || rc=$?
	[ $rc -ne 0 ] || fail "mkfs succeeded but should have failed: $*"
	[ $rc -lt 128 ] || { cat "$log" >&2; fail "mkfs died with status $rc: $*"; }
	[ -s "$log" ] || fail "mkfs failed without a message: $*"
}
mentions() { # mentions LOG TEXT WHAT
	grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$3: the message does not mention '$2'"; }
}

# --- (a) an unreadable source file ----------------------------------------
note "(a) unreadable file"
mkdir -p "$T/a/src/sub" "$T/a/out"
head -c 100000 /dev/urandom >"$T/a/src/sub/secret"
echo readable >"$T/a/src/one"
echo readable >"$T/a/src/sub/zzz"
chmod -R a+rX "$T/a/src"
chmod 000 "$T/a/src/sub/secret"
chown 65534:65534 "$T/a/out"
# Control: without the unreadable file the same user builds the image.
chmod 644 "$T/a/src/sub/secret"
"${NOBODY[@]}" "$USER_EROFSKIT" mkfs -q "$T/a/out/ok.img" "$T/a/src" ||
	fail "an unprivileged user cannot build a readable tree"
rm "$T/a/out/ok.img"
chmod 000 "$T/a/src/sub/secret"
for z in "" -zlz4hc; do          # the plain and the compressing writer
	mkfs_fails "$T/a.log" "${NOBODY[@]}" "$USER_EROFSKIT" mkfs $z "$T/a/out/img" "$T/a/src"
	mentions "$T/a.log" "sub/secret" "unreadable file ($z)"
	only_files "$T/a/out"
done
# An unreadable directory too.
chmod 644 "$T/a/src/sub/secret"
mkdir -m 000 "$T/a/src/locked"
mkfs_fails "$T/a2.log" "${NOBODY[@]}" "$USER_EROFSKIT" mkfs "$T/a/out/img" "$T/a/src"
mentions "$T/a2.log" "locked" "unreadable directory"
only_files "$T/a/out"
rmdir "$T/a/src/locked"

# --- (b) a full disk --------------------------------------------------------
note "(b) full disk"
mkdir -p "$T/b/src" "$T/b/small"
head -c $((3 << 20)) /dev/urandom >"$T/b/src/big.bin"
echo small >"$T/b/src/small.txt"
mount -t tmpfs -o size=1m tmpfs "$T/b/small" || fail "cannot mount a tmpfs"
_mounts+=("$T/b/small")
for z in "" -zlz4 -zzstd; do     # random data: compressed or not, too big
	mkfs_fails "$T/b.log" "$EROFSKIT" mkfs $z "$T/b/small/full.erofs" "$T/b/src"
	mentions "$T/b.log" "full.erofs" "full disk ($z)"
	grep -qiE "no space|ENOSPC" "$T/b.log" ||
		{ cat "$T/b.log" >&2; fail "full disk ($z): the message does not say the disk is full"; }
	only_files "$T/b/small"
	[ "$(df --output=used -k "$T/b/small" | tail -1 | tr -d ' ')" -eq 0 ] ||
		fail "the tmpfs still has space in use after the failed build ($z)"
done
# Control: the same tmpfs takes an image that fits (a sparse file of
# 64 MiB apparent size costs no space).
rm "$T/b/src/big.bin"
truncate -s 64M "$T/b/src/sparse.bin"
printf 'data in the middle' | dd of="$T/b/src/sparse.bin" bs=1 seek=$((32 << 20)) conv=notrunc status=none
"$EROFSKIT" mkfs -q "$T/b/small/fits.erofs" "$T/b/src" || fail "a small image does not fit on the tmpfs"
"$EROFSKIT" fsck -q "$T/b/small/fits.erofs" || fail "the image on the tmpfs fails fsck"
only_files "$T/b/small" fits.erofs
umount "$T/b/small"

# --- (c) files that change while they are read -----------------------------
note "(c) changing files"
mkdir -p "$T/c/src" "$T/c/out"
echo steady >"$T/c/src/steady"
# A sysfs attribute: stat says 4096 bytes, read returns a few.
head -c 4096 /dev/zero >"$T/c/src/shrinks"
mount --bind /sys/kernel/uevent_seqnum "$T/c/src/shrinks" || fail "cannot bind-mount a sysfs file"
_mounts+=("$T/c/src/shrinks")
[ "$(stat -c %s "$T/c/src/shrinks")" -eq 4096 ] || fail "test setup: sysfs file size is not 4096"
for z in "" -zlz4; do
	mkfs_fails "$T/c2.log" "$EROFSKIT" mkfs $z "$T/c/out/img" "$T/c/src"
	mentions "$T/c2.log" "shrinks" "a file shorter than its stat size ($z)"
	only_files "$T/c/out"
done

# --- (d) a failed build leaves an existing IMAGE alone ---------------------
note "(d) existing image kept"
head -c 12345 /dev/urandom >"$T/c/out/img"
before=$(sha256sum <"$T/c/out/img")
mkfs_fails "$T/d.log" "$EROFSKIT" mkfs "$T/c/out/img" "$T/c/src"
[ "$(sha256sum <"$T/c/out/img")" = "$before" ] || fail "a failed build changed the existing image"
only_files "$T/c/out" img
umount "$T/c/src/shrinks"
# (with the unreadable file as well)
chmod 000 "$T/a/src/sub/secret"
head -c 4096 /dev/urandom >"$T/a/out/img"
chown 65534:65534 "$T/a/out/img"
before=$(sha256sum <"$T/a/out/img")
mkfs_fails "$T/d2.log" "${NOBODY[@]}" "$USER_EROFSKIT" mkfs "$T/a/out/img" "$T/a/src"
[ "$(sha256sum <"$T/a/out/img")" = "$before" ] || fail "a failed build changed the existing image"
only_files "$T/a/out" img
# Control: a successful build does replace it, with a mode from the umask.
(umask 027 && "$EROFSKIT" mkfs -q "$T/c/out/img" "$T/c/src") || fail "rebuilding over an old image failed"
"$EROFSKIT" fsck -q "$T/c/out/img" || fail "the rebuilt image fails fsck"
[ "$(stat -c %a "$T/c/out/img")" = 640 ] || fail "image mode $(stat -c %a "$T/c/out/img") under umask 027, expected 640"
only_files "$T/c/out" img

# --- (e) SOURCE_DIR missing or not a directory -----------------------------
note "(e) bad SOURCE_DIR"
mkdir -p "$T/e"
expect_exit 2 "$EROFSKIT" mkfs "$T/e/img" "$T/e/no-such-dir" 2>"$T/e1.log"
mentions "$T/e1.log" "no-such-dir" "missing SOURCE_DIR"
echo file >"$T/e/plain"
expect_exit 2 "$EROFSKIT" mkfs "$T/e/img" "$T/e/plain" 2>"$T/e2.log"
mentions "$T/e2.log" "plain" "SOURCE_DIR that is a file"
ln -s /nonexistent "$T/e/dangling"
expect_exit 2 "$EROFSKIT" mkfs "$T/e/img" "$T/e/dangling" 2>"$T/e3.log"
mentions "$T/e3.log" "dangling" "SOURCE_DIR that is a dangling symlink"
# IMAGE in a directory that does not exist.
expect_exit 2 "$EROFSKIT" mkfs "$T/e/no-dir/img" "$T/a/src" 2>"$T/e4.log"
mentions "$T/e4.log" "no-dir/img" "IMAGE in a missing directory"
only_files "$T/e" plain dangling

# --- (c, continued) a file that grows past its stat size -------------------
# (Last, so that a failure here hides none of the checks above.)
note "(c) a file larger than its stat size"
rm -rf "$T/c/out" && mkdir -p "$T/c/out"
rm -f "$T/c/src/shrinks"
: >"$T/c/src/grows"
# /proc/version: stat says 0 bytes, read returns the version string.
mount --bind /proc/version "$T/c/src/grows" || fail "cannot bind-mount /proc/version"
_mounts+=("$T/c/src/grows")
[ "$(stat -c %s "$T/c/src/grows")" -eq 0 ] && [ -n "$(head -c 10 "$T/c/src/grows")" ] ||
	fail "test setup: /proc/version does not look empty to stat"
for z in "" -zlz4; do
	mkfs_fails "$T/c.log" "$EROFSKIT" mkfs $z "$T/c/out/img" "$T/c/src"
	mentions "$T/c.log" "grows" "a file larger than its stat size ($z)"
	only_files "$T/c/out"
done
umount "$T/c/src/grows"
echo PASS

# Extracting into a small filesystem that fills up fails cleanly: a message
# naming the problem, exit 2, no hang; the same with one and many workers.
. "$(dirname "$0")/lib.sh"

mkdir -p "$T/src"
head -c $((6 << 20)) /dev/urandom > "$T/src/random.bin"
for i in $(seq 1 50); do head -c 100000 /dev/urandom > "$T/src/f$i"; done
"$EROFSKIT" mkfs -q -zlz4 "$T/img" "$T/src"

truncate -s 4M "$T/small.ext4"
mkfs.ext4 -q -F "$T/small.ext4"
mkdir -p "$T/small"
mount -o loop "$T/small.ext4" "$T/small" || fail "cannot mount the small ext4"
_mounts+=("$T/small")
for w in 1 4; do
	rm -rf "$T/small/out"
	rc=0
	timeout 120 "$EROFSKIT" fsck --workers $w --extract "$T/small/out" "$T/img" \
		2>"$T/err" >/dev/null || rc=$?
	[ $rc -eq 2 ] || { cat "$T/err"; fail "--workers $w: exit $rc on a full disk, expected 2"; }
	grep -q "No space left on device" "$T/err" ||
		{ cat "$T/err"; fail "--workers $w: the error does not say the disk is full"; }
done
echo PASS

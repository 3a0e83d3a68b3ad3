# mkfs --tar needs no room for the archive twice: a file's data waits in
# a spool beside the image only while it is in flight, and its part is
# given back (holes punched) once it is in the image.  On a tmpfs too
# small for the image and a copy of the archive, from a file and from
# standard input, uncompressed and with -zlz4, the build succeeds and the
# kernel shows the archive's files.  Without the holes, the spool grows
# to the archive's size and the build fails with ENOSPC.
. "$(dirname "$0")/lib.sh"

# 96 files of 1 MiB: lines that lz4 shrinks about tenfold, none the same
# (dedupe would hide a spool that is never given back).
python3 - "$T/src" <<'PY'
import os, sys
root = sys.argv[1]
os.makedirs(root)
for i in range(96):
    with open(os.path.join(root, "f%02d" % i), "wb") as f:
        n = 0
        out = bytearray()
        while len(out) < 1 << 20:
            out += b"file %02d line %07d of the spool test\n" % (i, n)
            n += 1
        f.write(out[:1 << 20])
PY
manifest "$T/src" "$T/src.json"
tar --format=posix -cf "$T/src.tar" -C "$T/src" .
tar_mib=$(( $(stat -c %s "$T/src.tar") >> 20 ))

# Room for the uncompressed image (the archive's size and a little) but
# not for a second copy of the data beside it.
room=$(( tar_mib + tar_mib / 3 ))
mkdir -p "$T/small"
mount -t tmpfs -o size=${room}m tmpfs "$T/small" || fail "cannot mount a tmpfs"
_mounts+=("$T/small")
note "archive $tar_mib MiB, tmpfs $room MiB"

build() {   # label, stdin, archive, mkfs options...
	local label=$1 stdin=$2 archive=$3
	shift 3
	rm -f "$T/small/img"
	"$EROFSKIT" mkfs -q --tar "$@" "$T/small/img" "$archive" <"$stdin" 2>"$T/err" ||
		{ cat "$T/err" >&2; df -m "$T/small" >&2; fail "$label: mkfs --tar failed"; }
	note "$label: image $(( $(stat -c %s "$T/small/img") >> 20 )) MiB"
	kernel_check "$T/small/img" "$T/src.json" "$label"
	# Nothing but the image is left on the tmpfs.
	[ "$(ls -A "$T/small")" = img ] || fail "$label: left behind: $(ls -A "$T/small")"
}

build "uncompressed, from a file" /dev/null "$T/src.tar"
build "uncompressed, from standard input" "$T/src.tar" -
# Compressed, files of 1 MiB each wait in the spool until their last
# pcluster commits: the tmpfs is now far smaller than the archive.
rm -f "$T/small/img"
room=$(( tar_mib * 2 / 3 ))
mount -o remount,size=${room}m "$T/small" || fail "cannot shrink the tmpfs"
note "tmpfs $room MiB"
build "-zlz4, from standard input" "$T/src.tar" - -zlz4
echo PASS

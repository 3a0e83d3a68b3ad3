# The crafted-image corpus (tests/corrupt/make-corpus.py): one damaged image
# per known bug class.  For every case:
#  (a) erofskit fsck exits 1 (0 for the "valid" cases: forms the kernel
#      accepts) within 60 s and prints a problem matching the case's regex,
#      naming none of the intact files;
#  (b) fsck --extract DIR exits the same way and writes nothing outside DIR:
#      DIR's parent holds only DIR and a canary afterwards, a sibling
#      directory stays empty, the directory the hostile symlinks point at
#      keeps only its canary and the planted /tmp/erofskit-corpus-escape
#      never appears; the intact files are extracted whole;
#  (c) if the image still opens, erofskit mount serves it: the damaged path
#      fails as the case says (EIO for file data, inodes, symlinks and
#      xattrs; for directories: EIO when a block is malformed, ENOENT for
#      lookups in a directory whose blocks are out of order, ELOOP for an
#      entry that is its own directory (the kernel's FUSE layer refuses the
#      alias, as the kernel's EROFS does), EIO for an entry that is the root
#      (FUSE refuses the root's node id as a lookup result; the kernel's
#      EROFS says ELOOP); the intact files read back, and the server lives
#      until it is unmounted, then exits; an image that does not open is
#      refused by erofskit mount (exit 1, nothing mounted); the valid cases
#      are read through the kernel as well;
#  (d) erofskit dump --stats walks it within 60 s: exit 0 for the valid
#      cases, 1 where the image does not open, 0 or 1 otherwise (the damage
#      may lie in data the statistics do not read);
#  (e) erofskit mkfs, with it as the source image, refuses it (exit 1, no
#      image left) where it does not open or its tree loops (exit 2, not
#      a directory, where its magic is gone), rebuilds the valid cases,
#      and whatever it builds passes fsck;
#  (f) any other exit status (a crash, a sanitizer abort) fails the case, and
#      so does a sanitizer report on standard error.
# Every check of every case runs (but an extraction where fsck hung); the
# failed ones are listed at the end.
. "$(dirname "$0")/lib.sh"

# Sanitizer reports must never look like "corruption found" (exit 1).
[ -z "${ASAN_OPTIONS:-}" ] || export ASAN_OPTIONS="$ASAN_OPTIONS:exitcode=86"
[ -z "${UBSAN_OPTIONS:-}" ] || export UBSAN_OPTIONS="$UBSAN_OPTIONS:exitcode=86"
# A runaway allocation must fail, not take the machine: 4 GiB of address
# space (AddressSanitizer reserves terabytes of it, so that build gets an
# RSS limit instead, which aborts: a failure too).
if [ "${EROFSKIT_SANITIZED:-0}" = 1 ]; then
	limited() { ASAN_OPTIONS="${ASAN_OPTIONS:-}:hard_rss_limit_mb=4096" "$@"; }
else
	limited() { (ulimit -v 4194304 && exec "$@"); }
fi
# The interpreter itself, not a version-manager shim (it runs per case).
PY=$(python3 -c 'import sys; print(sys.executable)')

CORPUS=$T/corpus
ESCAPE=/tmp/erofskit-corpus-escape
rm -rf "$ESCAPE"
# The hostile cases' symlinks point into $T/outside, which holds a canary.
mkdir -p "$T/x" "$T/sibling" "$T/mnt" "$T/sha" "$T/outside"
echo "outside canary" > "$T/outside/canary"
"$PY" "$HERE/../corrupt/make-corpus.py" --outside "$T/outside" "$CORPUS" ||
	fail "make-corpus.py failed"

# One line per case: name, expect, opens, the exit statuses fsck --extract
# may give, regex; and per case the intact files' hashes in the form
# sha256sum -c reads, relative to the tree's root.
"$PY" - "$CORPUS/index.json" "$T/sha" > "$T/cases.tsv" <<'PY'
import json, os, sys
for c in json.load(open(sys.argv[1])):
    xcodes = c.get("extract_exit", [1 if c["expect"] == "corrupt" else 0])
    print("\t".join([c["name"], c["expect"], "yes" if c["opens"] else "no",
                     " ".join(map(str, xcodes)), c["fsck"]]))
    with open(os.path.join(sys.argv[2], c["name"]), "w") as f:
        for p, sha in c["intact"]:
            f.write("%s  .%s\n" % (sha, p))
PY
ncases=$(wc -l < "$T/cases.tsv")
[ "$ncases" -ge 60 ] || fail "the corpus has only $ncases cases"

# The mount-side checks of one case, against a mount point.
cat > "$T/mountcheck.py" <<'PY'
import errno, hashlib, json, mmap, os, sys

index, name, mnt = sys.argv[1], sys.argv[2], sys.argv[3]
case = {c["name"]: c for c in json.load(open(index))}[name]
m = case["mount"]
problems = []

def errname(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def read_all(path, limit=256 << 20):
    """The whole file, in 1 MiB reads (a crafted size may be 2^63 bytes:
    no read may be sized by it); more than `limit` bytes without an error
    counts as a read that succeeded."""
    out = []
    with open(path, "rb") as f:
        while limit > 0:
            b = f.read(1 << 20)
            if not b:
                break
            out.append(b)
            limit -= len(b)
    return b"".join(out)

def pread_direct(path):
    """4 KiB O_DIRECT reads at every block: each reaches the server at its
    own offset (no page cache, no readahead)."""
    fails = []
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        buf = mmap.mmap(-1, 4096)
        for off in range(0, os.fstat(fd).st_size, 4096):
            try:
                os.preadv(fd, [buf], off)
            except OSError as e:
                fails.append(e)
    finally:
        os.close(fd)
    return fails

def expect_fail(what, fn):
    try:
        fn()
    except OSError as e:
        if errname(e) not in m["errno"]:
            problems.append("%s %s: %s, expected %s" % (what, m["path"], errname(e), "/".join(m["errno"])))
        return
    problems.append("%s %s succeeded, expected %s" % (what, m["path"], "/".join(m["errno"])))

def xattrs(path):
    for n in os.listxattr(path, follow_symlinks=False):
        os.getxattr(path, n, follow_symlinks=False)

op, path = m["op"], mnt + m["path"]
if op == "read":
    expect_fail("reading", lambda: read_all(path))
elif op == "pread":
    fails = pread_direct(path)
    if not fails:
        problems.append("every block of %s read, expected %s" % (m["path"], m["errno"]))
    problems += ["block read of %s: %s" % (m["path"], errname(e))
                 for e in fails if errname(e) not in m["errno"]]
elif op == "list":
    expect_fail("listing", lambda: os.listdir(path))
elif op == "stat":
    expect_fail("stat of", lambda: os.lstat(path))
elif op == "readlink":
    expect_fail("readlink of", lambda: os.readlink(path))
elif op == "xattrs":
    expect_fail("xattrs of", lambda: xattrs(path))
    if m.get("also_read"):
        expect_fail("reading", lambda: read_all(path))
elif op == "lookup":
    # Lookups by name before any listing (a listing would fill the dentry
    # cache through READDIRPLUS and no lookup would reach the server).
    bad = 0
    for n in m["names"]:
        try:
            os.lstat(os.path.join(path, n))
        except OSError as e:
            bad += 1
            if errname(e) not in m["errno"]:
                problems.append("lookup of %s/%s: %s" % (m["path"], n, errname(e)))
    if not bad:
        problems.append("every name in %s could be looked up" % m["path"])
elif op != "none":
    problems.append("unknown op " + op)

for p, sha in case["intact"]:
    try:
        if hashlib.sha256(read_all(mnt + p)).hexdigest() != sha:
            problems.append("intact %s reads back wrong" % p)
    except OSError as e:
        problems.append("intact %s: %s" % (p, errname(e)))
if case.get("kernel") is not None:
    # A valid case: the files the kernel reads must read the same here.
    for p, sha in case["kernel"]:
        try:
            if hashlib.sha256(read_all(mnt + p)).hexdigest() != sha:
                problems.append("%s reads back wrong" % p)
        except OSError as e:
            problems.append("%s: %s" % (p, errname(e)))
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
PY

# sanitizer_clean FILE WHAT: no sanitizer report in FILE.
sanitizer_clean() {
	if grep -qE "Sanitizer|runtime error:" "$1"; then
		head -30 "$1" >&2
		fail "$2: sanitizer report"
	fi
}

# The three checks of a case; each runs in a subshell (fail ends that
# check only).  Mount servers are unmounted without waiting; their pids go
# to $T/servers and are required to exit at the end.
# check_fsck NAME EXPECT REGEX
check_fsck() {
	local name=$1 expect=$2 regex=$3 img=$CORPUS/$1.img want=1 rc=0 p
	[ "$expect" = valid ] && want=0
	limited timeout 60 "$EROFSKIT" fsck "$img" >"$T/out" 2>"$T/err" || rc=$?
	sanitizer_clean "$T/err" "$name: fsck"
	if [ "$rc" -eq 124 ]; then
		touch "$T/hung.$name"
		fail "$name: fsck did not finish within 60 s"
	fi
	[ "$rc" -eq "$want" ] || { head -5 "$T/err" >&2; fail "$name: fsck exit $rc, expected $want"; }
	if [ "$want" -eq 1 ]; then
		grep -qE -- "$regex" "$T/err" ||
			{ cat "$T/err" >&2; fail "$name: no fsck message matching /$regex/"; }
	else
		grep -q ": clean:" "$T/out" || fail "$name: fsck did not say clean"
	fi
	while read -r _ p; do
		! grep -qF "fsck: ${p#.} (" "$T/err" || fail "$name: intact ${p#.} was reported"
	done < "$T/sha/$name"
}

# check_extract NAME OPENS XCODES: into a directory with only a canary beside it
check_extract() {
	local name=$1 opens=$2 xcodes=$3 img=$CORPUS/$1.img rc=0 parent=$T/x/$1 left
	mkdir "$parent"
	echo "canary $name" > "$parent/canary"
	limited timeout 60 "$EROFSKIT" fsck -q --extract "$parent/out" "$img" >/dev/null 2>"$T/xerr" || rc=$?
	sanitizer_clean "$T/xerr" "$name: fsck --extract"
	[ "$rc" -ne 124 ] || fail "$name: fsck --extract did not finish within 60 s"
	left=$(ls -A "$parent" | sort | tr '\n' ' ')
	[ "$left" = "canary out " ] || [ "$left" = "canary " ] ||
		fail "$name: extraction left '$left' beside DIR"
	[ "$(cat "$parent/canary")" = "canary $name" ] || fail "$name: the canary changed"
	[ -z "$(ls -A "$T/sibling")" ] || fail "$name: something appeared in a sibling directory"
	[ ! -e "$ESCAPE" ] && [ ! -L "$ESCAPE" ] || fail "$name: extraction created $ESCAPE"
	[ "$(ls -A "$T/outside")" = canary ] && [ "$(cat "$T/outside/canary")" = "outside canary" ] ||
		fail "$name: extraction wrote through a symlink into $T/outside"
	[[ " $xcodes " == *" $rc "* ]] || { head -5 "$T/xerr" >&2; fail "$name: fsck --extract exit $rc, expected $xcodes"; }
	if [ "$opens" = yes ] && [ "$rc" -le 1 ] && [ -s "$T/sha/$name" ]; then
		(cd "$parent/out" && sha256sum --quiet -c "$T/sha/$name") >&2 ||
			fail "$name: intact files not extracted whole"
	fi
}

# check_stats NAME EXPECT OPENS
check_stats() {
	local name=$1 expect=$2 opens=$3 img=$CORPUS/$1.img rc=0
	limited timeout 60 "$EROFSKIT" dump --stats "$img" >/dev/null 2>"$T/serr" || rc=$?
	sanitizer_clean "$T/serr" "$name: dump --stats"
	[ "$rc" -ne 124 ] || fail "$name: dump --stats did not finish within 60 s"
	if [ "$expect" = valid ]; then
		[ "$rc" -eq 0 ] || { head -5 "$T/serr" >&2; fail "$name: dump --stats exit $rc, expected 0"; }
	elif [ "$opens" = no ]; then
		[ "$rc" -eq 1 ] || { head -5 "$T/serr" >&2; fail "$name: dump --stats exit $rc, expected 1"; }
	else
		[ "$rc" -le 1 ] || { head -5 "$T/serr" >&2; fail "$name: dump --stats exit $rc"; }
	fi
}

# check_rebuild NAME EXPECT OPENS: erofskit mkfs with the case as its
# source image, within 60 s: an image that does not open is refused (exit
# 1), a valid one rebuilt; a damaged one either (the damage may lie where
# the copy does not read, or decode unnoticed, as EROFS keeps no data
# checksums), but a directory that names itself or an ancestor, or a
# name holding '/', is refused; what it builds passes fsck, and a refusal
# leaves no image.
check_rebuild() {
	local name=$1 expect=$2 opens=$3 img=$CORPUS/$1.img out=$T/rebuilt.img rc=0
	rm -f "$out"
	limited timeout 60 "$EROFSKIT" mkfs -q "$out" "$img" >/dev/null 2>"$T/rerr" || rc=$?
	sanitizer_clean "$T/rerr" "$name: mkfs from it"
	[ "$rc" -ne 124 ] || fail "$name: mkfs from it did not finish within 60 s"
	case $name in
	dir-contains-itself | dir-contains-ancestor | dir-name-slash) expect=refused ;;
	# No magic, no image: a file where a directory goes (usage, exit 2).
	sb-bad-magic) expect=notimage ;;
	esac
	if [ "$expect" = notimage ]; then
		[ "$rc" -eq 2 ] && grep -q "not a directory" "$T/rerr" ||
			{ head -5 "$T/rerr" >&2; fail "$name: mkfs from it exit $rc, expected 2"; }
	elif [ "$expect" = valid ]; then
		[ "$rc" -eq 0 ] || { head -5 "$T/rerr" >&2; fail "$name: mkfs from it: exit $rc, not 0"; }
	elif [ "$opens" = no ] || [ "$expect" = refused ]; then
		[ "$rc" -eq 1 ] || { head -5 "$T/rerr" >&2; fail "$name: mkfs from it: exit $rc, not 1"; }
	else
		[ "$rc" -le 1 ] || { head -5 "$T/rerr" >&2; fail "$name: mkfs from it exit $rc"; }
	fi
	if [ "$rc" -eq 0 ]; then
		"$EROFSKIT" fsck -q "$out" || fail "$name: the image rebuilt from it is not clean"
	else
		[ ! -e "$out" ] || fail "$name: mkfs from it failed and left an image"
	fi
}

# check_mount NAME EXPECT OPENS
check_mount() {
	local name=$1 expect=$2 opens=$3 img=$CORPUS/$1.img rc=0 pid mnt=$T/mnt/$1
	mkdir "$mnt"
	if [ "$opens" = yes ]; then
		"$EROFSKIT" mount "$img" "$mnt" || fail "$name: erofskit mount failed"
		mountpoint -q "$mnt" || fail "$name: erofskit mount did not mount"
		pid=$(fmount_pid "$mnt")
		[ -n "$pid" ] || fail "$name: no server process"
		timeout 120 "$PY" "$T/mountcheck.py" "$CORPUS/index.json" "$name" "$mnt" >"$T/merr" 2>&1 ||
			{ cat "$T/merr" >&2; fail "$name: mount check failed"; }
		server_running "$pid" || fail "$name: the mount server died"
		fusermount3 -u "$mnt" || fail "$name: cannot unmount"
		echo "$pid $name" >> "$T/servers"
	else
		timeout 60 "$EROFSKIT" mount "$img" "$mnt" 2>"$T/merr" || rc=$?
		sanitizer_clean "$T/merr" "$name: mount"
		if mountpoint -q "$mnt"; then
			umount "$mnt"
			fail "$name: erofskit mount accepted an image that does not open"
		fi
		[ "$rc" -eq 1 ] || { cat "$T/merr" >&2; fail "$name: erofskit mount exit $rc, expected 1"; }
	fi
	if [ "$expect" = valid ]; then
		kmount "$img" "$T/k"
		"$PY" - "$CORPUS/index.json" "$name" "$T/k" <<'PY' || fail "$name: the kernel does not read it back"
import hashlib, json, sys
case = {c["name"]: c for c in json.load(open(sys.argv[1]))}[sys.argv[2]]
sys.exit(any(hashlib.sha256(open(sys.argv[3] + p, "rb").read()).hexdigest() != sha
             for p, sha in case["kernel"]))
PY
		kumount "$T/k"
	fi
}

_mounts+=("$T/k")
failed=()
while IFS=$'\t' read -r name expect opens xcodes regex; do
	_mounts+=("$T/mnt/$name")
	bad=""
	for step in fsck extract stats rebuild mount; do
		# An extraction would hang where the check hung: it is not run.
		if [ $step = extract ] && [ -e "$T/hung.$name" ]; then
			bad="$bad extract(not run)"
			continue
		fi
		set +e
		(
			set -e
			# A failed check must not leave its mounts behind (the
			# mount step's alone: checking for them after every step
			# took a sixth of this test's time).
			[ $step != mount ] ||
				trap 'if mountpoint -q "$T/mnt/$name"; then fusermount3 -u "$T/mnt/$name" || umount -l "$T/mnt/$name"; fi
				      if mountpoint -q "$T/k"; then umount "$T/k"; fi' EXIT
			case $step in
			fsck) check_fsck "$name" "$expect" "$regex" ;;
			extract) check_extract "$name" "$opens" "$xcodes" ;;
			stats) check_stats "$name" "$expect" "$opens" ;;
			rebuild) check_rebuild "$name" "$expect" "$opens" ;;
			mount) check_mount "$name" "$expect" "$opens" ;;
			esac
		) </dev/null
		rc=$?
		set -e
		[ "$rc" -eq 0 ] || bad="$bad $step"
	done
	rm -rf "$T/x/$name"
	if [ -z "$bad" ]; then
		note "$name: ok"
	else
		failed+=("$name(${bad# })")
	fi
done < "$T/cases.tsv"

# Every server exits once unmounted.
if [ -s "$T/servers" ]; then
	for _ in $(seq 100); do
		alive=$(while read -r pid name; do
				if server_running "$pid"; then echo "$name"; fi
			done < "$T/servers")
		[ -z "$alive" ] && break
		sleep 0.1
	done
	[ -z "$alive" ] || fail "mount servers still running 10 s after unmount: $alive"
fi
[ ${#failed[@]} -eq 0 ] || fail "${#failed[@]} of $ncases cases failed: ${failed[*]}"
echo PASS

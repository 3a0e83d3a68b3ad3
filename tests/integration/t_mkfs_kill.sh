# mkfs writes an unnamed file (O_TMPFILE) beside IMAGE, and names it and
# renames it over IMAGE only when everything succeeded:
#  1. kill -9 in the middle of a long build (64 MiB of noise with lzma)
#     leaves nothing at all beside IMAGE, and a pre-existing IMAGE keeps
#     its old content; without /proc/self/fd (which names the unnamed
#     file) mkfs writes IMAGE.tmp.* instead, makes the same image, and a
#     kill leaves only that;
#  2. kills spread over a whole (shorter) build, up to its last moments:
#     IMAGE is always either the old image or the complete new one (builds
#     are reproducible, so "complete" is a known sha256), never torn;
#  3. SIGINT, SIGTERM or SIGHUP stops it as a failure does: exit 128 + the
#     signal, a message, the old IMAGE kept and no temporary file left;
#  4. a source file that grows while mkfs runs (a background writer appends
#     to it) makes mkfs fail with a message naming the file and leave no
#     IMAGE and no temporary file, or, if the race is missed, the image
#     passes fsck; over several tries the change is detected at least once.
. "$(dirname "$0")/lib.sh"

sha_of() { sha256sum "$1" | cut -d' ' -f1; }

# only_image DIR BASE WHAT: DIR holds nothing but BASE (if that)
only_image() {
	local f
	while IFS= read -r f; do
		[ "$f" = "$2" ] || fail "$3: $f left next to the image"
	done < <(find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n')
}

# only_image_and_tmp DIR BASE WHAT: DIR holds nothing but BASE and BASE.tmp.*
only_image_and_tmp() {
	local f
	while IFS= read -r f; do
		case $f in
		"$2" | "$2".tmp.*) ;;
		*) fail "$3: unexpected $f next to the image" ;;
		esac
	done < <(find "$1" -mindepth 1 -maxdepth 1 -printf '%f\n')
}

# Noise that takes the encoder's time: random bytes in base64.  Raw random
# bytes would not do: mkfs sees they do not compress and stores them as
# they are, without compressing.
noise() {   # RANDOM_BYTES FILE
	head -c "$1" /dev/urandom | base64 -w 76 > "$2"
}

mkdir -p "$T/big" "$T/out" "$T/old"
noise 48M "$T/big/noise.txt"
echo "small" > "$T/big/small.txt"
echo "the old image" > "$T/old/old.txt"
"$EROFSKIT" mkfs -q "$T/old.img" "$T/old" || fail "mkfs of the old image"
OLD=$(sha_of "$T/old.img")

# Two compression threads whatever the machine, so that a build lasts long
# enough everywhere (about 10 s for 64 MiB).
MKFS_OPTS="-q -zlzma --workers 2"

# kill_after SECONDS IMG SRC [WRAPPER...]: start mkfs (through WRAPPER),
# kill -9 it after SECONDS (only if it is still running); returns 0 if the
# kill landed mid-build.
kill_after() {
	local pid rc=0 delay=$1 img=$2 src=$3
	shift 3
	# shellcheck disable=SC2086
	"$@" "$EROFSKIT" mkfs $MKFS_OPTS "$img" "$src" 2>"$T/mkfs.err" &
	pid=$!
	sleep "$delay"
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid" || true
		return 1
	fi
	kill -9 "$pid"
	wait "$pid" || rc=$?
	[ "$rc" -eq 137 ] || return 1
	return 0
}

note "1. kill -9 during a 64 MiB lzma build"
landed=0
for delay in 0.3 1 2.5; do
	# Without an image at the path...
	rm -rf "$T/out"/*
	if kill_after "$delay" "$T/out/root.erofs" "$T/big"; then
		landed=$((landed + 1))
		[ ! -e "$T/out/root.erofs" ] && [ ! -L "$T/out/root.erofs" ] ||
			fail "killed after ${delay}s: a file is at IMAGE"
		only_image "$T/out" root.erofs "killed after ${delay}s"
	fi
	# ...and with an old one.
	rm -rf "$T/out"/*
	cp "$T/old.img" "$T/out/root.erofs"
	if kill_after "$delay" "$T/out/root.erofs" "$T/big"; then
		landed=$((landed + 1))
		[ "$(sha_of "$T/out/root.erofs")" = "$OLD" ] ||
			fail "killed after ${delay}s: the old image changed"
		only_image "$T/out" root.erofs "killed after ${delay}s, old image"
	fi
done
[ "$landed" -eq 6 ] || fail "only $landed of 6 kills landed in the middle of a build"

note "1b. without /proc/self/fd: a named temporary file, the same image"
# In a mount namespace of its own, an empty tmpfs over the process's
# /proc/PID/fd (all else of /proc stays, which the sanitizers read): the
# unnamed file could not be named, so mkfs does not make one.  A command
# line, not a function: a background function is a shell of its own,
# whose kill would leave mkfs running.
no_proc=(unshare -m --propagation private sh -c 'mount -t tmpfs none /proc/$$/fd && exec "$@"' sh)
[ -z "$("${no_proc[@]}" ls /proc/self/fd)" ] || fail "cannot hide /proc/self/fd (unshare -m)"
rm -rf "$T/out"/*
cp "$T/old.img" "$T/out/root.erofs"
kill_after 1 "$T/out/root.erofs" "$T/big" "${no_proc[@]}" ||
	fail "without /proc/self/fd: the kill did not land mid-build"
[ "$(sha_of "$T/out/root.erofs")" = "$OLD" ] || fail "without /proc/self/fd: the old image changed"
only_image_and_tmp "$T/out" root.erofs "killed without /proc/self/fd"
ls "$T/out"/root.erofs.tmp.* >/dev/null 2>&1 ||
	fail "without /proc/self/fd: no IMAGE.tmp.* was written"
rm -rf "$T/out"/*
"$EROFSKIT" mkfs -q -zlz4 "$T/out/proc.img" "$T/old" || fail "mkfs -zlz4 of the old tree"
"${no_proc[@]}" "$EROFSKIT" mkfs -q -zlz4 "$T/out/root.erofs" "$T/old" ||
	fail "mkfs without /proc/self/fd"
cmp -s "$T/out/proc.img" "$T/out/root.erofs" || fail "without /proc/self/fd: another image"
rm -f "$T/out/proc.img"
only_image "$T/out" root.erofs "a build without /proc/self/fd"

note "2. kills spread over a whole build"
mkdir -p "$T/mid"
noise 18M "$T/mid/noise.txt"
cp -r "$T/old" "$T/mid/sub"
# The build's duration: the shorter of two builds (both must be the same).
dur=
for i in 1 2; do
	start=$(date +%s%N)
	# shellcheck disable=SC2086
	"$EROFSKIT" mkfs $MKFS_OPTS "$T/full$i.img" "$T/mid" || fail "mkfs of the reference image"
	ms=$(( ($(date +%s%N) - start) / 1000000 ))
	[ -z "$dur" ] || [ "$ms" -lt "$dur" ] && dur=$ms
done
cmp -s "$T/full1.img" "$T/full2.img" || fail "two builds of the same tree differ"
mv "$T/full1.img" "$T/full.img"
NEW=$(sha_of "$T/full.img")
"$EROFSKIT" fsck -q "$T/full.img" || fail "the reference image does not pass fsck"
landed=0
for pct in 10 20 30 45 60 75 85 92 96 99 103 110; do
	ms=$((dur * pct / 100))
	rm -rf "$T/out"/*
	cp "$T/old.img" "$T/out/root.erofs"
	kill_after "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))" "$T/out/root.erofs" "$T/mid" &&
		landed=$((landed + 1))
	sha=$(sha_of "$T/out/root.erofs")
	[ "$sha" = "$OLD" ] || [ "$sha" = "$NEW" ] ||
		fail "killed at $pct% of the build: IMAGE is neither the old nor the complete image"
	# The file is named only for the instant between its link and the
	# rename, so a kill may land there (IMAGE.tmp.PID.N left).
	only_image_and_tmp "$T/out" root.erofs "killed at $pct% of the build"
done
note "$landed of 12 kills landed mid-build"
[ "$landed" -ge 5 ] || fail "only $landed of 12 kills landed in the middle of a build"

note "3. SIGINT, SIGTERM, SIGHUP stop a build cleanly: 128 + the signal, nothing left but the old image"
tar -C "$T/big" -cf "$T/big.tar" .
for sig in INT TERM HUP; do
	for src in dir tar; do
		rm -rf "$T/out"/*
		cp "$T/old.img" "$T/out/root.erofs"
		[ $src = dir ] && args=("$T/out/root.erofs" "$T/big") ||
			args=(--tar "$T/out/root.erofs" "$T/big.tar")
		# A background job's SIGINT is ignored (and stays so in mkfs):
		# this one starts with every signal at its default.
		# shellcheck disable=SC2086
		python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "$EROFSKIT" mkfs $MKFS_OPTS "${args[@]}" 2>"$T/mkfs.err" &
		pid=$!
		sleep 1
		kill -0 "$pid" 2>/dev/null || fail "SIG$sig, $src: the build ended within a second"
		start=$(date +%s%N)
		kill -s "$sig" "$pid"
		rc=0
		wait "$pid" || rc=$?
		ms=$(( ($(date +%s%N) - start) / 1000000 ))
		[ "$rc" -eq $((128 + $(kill -l "$sig"))) ] ||
			fail "SIG$sig, $src: exit $rc: $(cat "$T/mkfs.err")"
		grep -q "stopped by .*: the image was not written" "$T/mkfs.err" ||
			fail "SIG$sig, $src: $(cat "$T/mkfs.err")"
		[ "$ms" -lt 2000 ] || fail "SIG$sig, $src: $ms ms to stop"
		[ "$(sha_of "$T/out/root.erofs")" = "$OLD" ] || fail "SIG$sig, $src: the old image changed"
		[ "$(ls -A "$T/out")" = root.erofs ] ||
			fail "SIG$sig, $src: left beside the image: $(ls -A "$T/out")"
	done
done

note "4. a source file growing while mkfs reads it"
mkdir -p "$T/grow"
noise 12M "$T/grow/bulk.txt"
head -c 1M /dev/urandom > "$T/grow/growing.log"
detected=0
for try in 1 2 3 4 5; do
	rm -rf "$T/out"/*
	python3 - "$T/grow/growing.log" "$T/writer.ready" <<'PY' &
import os, sys, time
chunk = os.urandom(65536)
with open(sys.argv[1], "ab") as f:
    open(sys.argv[2], "w").close()
    while True:
        f.write(chunk)
        f.flush()
        time.sleep(0.005)
PY
	writer=$!
	for _ in $(seq 100); do [ -e "$T/writer.ready" ] && break; sleep 0.05; done
	rc=0
	timeout 120 "$EROFSKIT" mkfs -q -zlz4 "$T/out/root.erofs" "$T/grow" 2>"$T/mkfs.err" || rc=$?
	kill "$writer"
	wait "$writer" 2>/dev/null || true
	rm -f "$T/writer.ready"
	[ "$rc" -ne 124 ] || fail "try $try: mkfs hung"
	if [ "$rc" -ne 0 ]; then
		grep -q "growing.log" "$T/mkfs.err" ||
			{ cat "$T/mkfs.err" >&2; fail "try $try: mkfs failed (exit $rc) without naming the file"; }
		[ -z "$(ls -A "$T/out")" ] ||
			fail "try $try: a failed mkfs left $(ls -A "$T/out")"
		detected=$((detected + 1))
	else
		"$EROFSKIT" fsck -q "$T/out/root.erofs" ||
			fail "try $try: mkfs missed the change and wrote an image that fails fsck"
	fi
	# The next try starts from a file of a known size again.
	truncate -s 1M "$T/grow/growing.log"
done
note "the growing file was detected in $detected of 5 tries"
[ "$detected" -ge 1 ] || fail "a file growing during mkfs was never detected in 5 tries"
echo PASS

# 8 threads of random reads of random lengths across all files of a
# mounted image, every byte compared with the source, once per I/O back
# end; the server's memory stays within its cache plus a fixed overhead.
. "$(dirname "$0")/lib.sh"

make_compact_tree "$T/src" "$T/src.json"
python3 - "$T/src/big.txt" <<'PY'
import random, sys
r = random.Random(2)
words = [bytes(r.choice(b"qwertyuiop") for _ in range(r.randint(2, 9))) for _ in range(3000)]
with open(sys.argv[1], "wb") as f:
    for i in range(3000000):
        f.write(r.choice(words) + b" ")
PY
"$EROFSKIT" mkfs -q -zlz4hc -C65536 "$T/img" "$T/src"
CACHE_MB=32
OVERHEAD_MB=96   # code, libraries, FUSE and decode buffers, malloc slack
# AddressSanitizer holds freed memory in a quarantine (256 MiB by default)
# that would count as the server's: the sanitized run measures with a
# small one (16 threads x 256 KiB replies fill the default in seconds).
if [ "${EROFSKIT_SANITIZED:-0}" = 1 ]; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:quarantine_size_mb=16"
fi
for io in pread uring; do
	note "io=$io"
	fmount "$T/img" "$T/m" "io=$io,cache=${CACHE_MB}M"
	pid=$(fmount_pid "$T/m")
	[ -n "$pid" ] || fail "no server process"
	( max=0; while server_running "$pid"; do
		rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || echo 0)
		[ "${rss:-0}" -gt "$max" ] && max=$rss && echo "$max" > "$T/rss.$io"
		sleep 0.2
	  done ) &
	reads=$(python3 "$HERE/stress.py" "$T/m" "$T/src" 12 8) ||
		fail "io=$io: stress reads failed"
	note "io=$io: $reads reads compared"
	[ "$reads" -gt 100 ] || fail "io=$io: only $reads reads in 12 s"
	fumount "$T/m"
	wait
	rss_kb=$(cat "$T/rss.$io")
	note "io=$io: peak RSS $((rss_kb / 1024)) MiB (cache ${CACHE_MB} MiB)"
	[ "$rss_kb" -le $(((CACHE_MB + OVERHEAD_MB) * 1024)) ] ||
		fail "io=$io: server RSS $((rss_kb / 1024)) MiB exceeds cache + ${OVERHEAD_MB} MiB"
done
# With io=uring (O_DIRECT) the image's blocks stay out of the page cache.
sync; echo 3 > /proc/sys/vm/drop_caches
fmount "$T/img" "$T/m" "io=uring"
cat "$T/m/big.txt" > /dev/null
resident=$(fincore -n -o RES -b "$T/img" | tr -d ' ')
fumount "$T/m"
note "image pages in the page cache after reading through io=uring: $resident bytes"
[ "$resident" -lt $((1 << 20)) ] || fail "io=uring left $resident bytes of the image cached"

# read_one_page OFFSET WANT: one 4 KiB read of the mounted big.txt, then
# up to 30 s for WANT bytes of it to be in the page cache; sets $cached.
# The pages arrive from the server's background read-around: under ASan,
# with another test's mkfs on both cores, 5 s once left the last 3 of
# 256 pages still to come.
read_one_page() {
	dd if="$T/m/big.txt" of=/dev/null bs=4096 skip=$(($1 / 4096)) count=1 status=none
	for _ in $(seq 300); do
		cached=$(fincore -n -o RES -b "$T/m/big.txt" | tr -d ' ')
		[ "$cached" -ge "$2" ] && return
		sleep 0.1
	done
}

# A random 4 KiB read of a compressed file leaves the rest of its 64 KiB
# cluster in the kernel's page cache (FUSE_NOTIFY_STORE), and those pages
# hold the file's bytes.
sync; echo 3 > /proc/sys/vm/drop_caches
fmount "$T/img" "$T/m" "cache=8M"
off=$((5 << 20))
read_one_page $off $((32 << 10))
note "pages cached after one 4 KiB random read: $cached bytes"
[ "$cached" -ge $((32 << 10)) ] || fail "a random read did not prefill its cluster ($cached bytes cached)"
python3 - "$T/m/big.txt" "$T/src/big.txt" "$off" <<'PY' || fail "prefilled pages differ from the source"
import sys
off = int(sys.argv[3])
with open(sys.argv[1], "rb") as m, open(sys.argv[2], "rb") as s:
    for o in range(max(0, off - (128 << 10)), off + (128 << 10), 4096):
        m.seek(o); s.seek(o)
        if m.read(4096) != s.read(4096):
            sys.exit("mismatch at %d" % o)
PY
fumount "$T/m"

# With 4 KiB clusters a random read gets its whole aligned 1 MiB window
# decoded around it (read-around) and pushed to the page cache.
"$EROFSKIT" mkfs -q -zlz4hc -C4096 "$T/img4k" "$T/src"
sync; echo 3 > /proc/sys/vm/drop_caches
fmount "$T/img4k" "$T/m" "cache=8M"
read_one_page $(((5 << 20) + (40 << 10))) $((1 << 20))
note "pages cached after one 4 KiB random read of 4 KiB clusters: $cached bytes"
[ "$cached" -ge $((1 << 20)) ] || fail "a random read of small clusters was not read around ($cached bytes cached)"
python3 - "$T/m/big.txt" "$T/src/big.txt" <<'PY' || fail "read-around pages differ from the source"
import sys
with open(sys.argv[1], "rb") as m, open(sys.argv[2], "rb") as s:
    for o in range(5 << 20, 6 << 20, 4096):
        m.seek(o); s.seek(o)
        if m.read(4096) != s.read(4096):
            sys.exit("mismatch at %d" % o)
PY
fumount "$T/m"

# The server keeps its request threads: reading the file a second time
# (its pages dropped), none of the threads that answered the first time
# ends, and their number stays bounded (libfuse's old loop entry point
# started a thread per request and ended the previous one).
fmount "$T/img" "$T/m" "cache=8M"
pid=$(fmount_pid "$T/m")
cat "$T/m/big.txt" > /dev/null
ls /proc/"$pid"/task | sort > "$T/tids1"
sync; echo 3 > /proc/sys/vm/drop_caches
cat "$T/m/big.txt" > /dev/null
ls /proc/"$pid"/task | sort > "$T/tids2"
fumount "$T/m"
ended=$(comm -23 "$T/tids1" "$T/tids2" | wc -l)
started=$(comm -13 "$T/tids1" "$T/tids2" | wc -l)
note "threads during the second read: $ended ended, $started started, $(wc -l < "$T/tids2") now"
[ "$ended" -eq 0 ] || fail "$ended server threads ended during a sequential read"
[ "$(wc -l < "$T/tids2")" -le 32 ] || fail "the server runs $(wc -l < "$T/tids2") threads"
echo PASS

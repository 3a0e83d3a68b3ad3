# The command line: usage errors of every subcommand exit 2 with a message
# on stderr and nothing on stdout (and mkfs then writes no image), the
# synopsis after it and not the whole --help; --help
# and --version exit 0; fsck tells an I/O problem (2) from a corrupt or
# foreign image (1). fsck shows progress on a terminal, and only there.
. "$(dirname "$0")/lib.sh"

E=$EROFSKIT
cd "$T"
mkdir src
echo hello >src/file
mkdir src/dir
"$E" mkfs -q good.img src

# usage_error CMD...: exit 2, a message on stderr, nothing on stdout, and
# no image "out.img" (or its temporary file) left behind.
usage_error() {
	local rc=0
	"$@" >cli.out 2>cli.err || rc=$?
	[ $rc -eq 2 ] || { cat cli.err >&2; fail "expected exit 2, got $rc: ${*#"$E"}"; }
	[ -s cli.err ] || fail "no message on stderr: ${*#"$E"}"
	# "erofskit mkfs: ..." as coreutils name themselves, or the usage
	head -n1 cli.err | grep -qE '^(erofskit( (mkfs|fsck|dump|mount|push))?: |usage: erofskit)' ||
		{ cat cli.err >&2; fail "the message does not start with 'erofskit CMD:': ${*#"$E"}"; }
	[ ! -s cli.out ] || fail "usage error wrote to stdout: ${*#"$E"}"
	compgen -G 'out.img*' >/dev/null && fail "an image was written despite the usage error: ${*#"$E"}"
	return 0
}
# says TEXT: the last stderr mentions TEXT.
says() { grep -qiF -- "$1" cli.err || { cat cli.err >&2; fail "the message does not mention '$1'"; }; }

note "top level"
usage_error "$E"
says "usage: erofskit"
usage_error "$E" frobnicate
says frobnicate
usage_error "$E" --bogus

note "mkfs usage errors"
usage_error "$E" mkfs --bogus out.img src;              says "erofskit mkfs: unknown option '--bogus'"
usage_error "$E" mkfs -k out.img src;                   says "erofskit mkfs: unknown option '-k'"
# The error stays on the screen: the synopsis and a pointer to --help
# follow it, not the whole of --help.
for sub in mkfs fsck dump mount push; do
	usage_error "$E" $sub --bogus;                  says "Try 'erofskit $sub --help'"
	says "usage: erofskit $sub"
	[ "$(wc -l <cli.err)" -le 8 ] || fail "$sub --bogus: $(wc -l <cli.err) lines on stderr"
done
usage_error "$E" fsck --workers;                        says "erofskit fsck: option '--workers' needs a value"
usage_error "$E" fsck --quiet=yes good.img;             says "erofskit fsck: option '--quiet' takes no value"
usage_error "$E" dump --bogus good.img;                 says "erofskit dump: unknown option '--bogus'"
usage_error "$E" mkfs;                                  says "usage: erofskit mkfs"
usage_error "$E" mkfs out.img;                          says "usage: erofskit mkfs"
usage_error "$E" mkfs out.img src extra;                says "usage: erofskit mkfs"
usage_error "$E" mkfs out.img src -b;                   says "usage: erofskit mkfs"
usage_error "$E" mkfs -b 1000 out.img src;              says 1000
usage_error "$E" mkfs -b 8192 out.img src;              says 8192
usage_error "$E" mkfs -b 256 out.img src;               says 256
usage_error "$E" mkfs -b 0 out.img src
usage_error "$E" mkfs -b 4k2 out.img src
usage_error "$E" mkfs -C 0 out.img src;                 says "'0'"
usage_error "$E" mkfs -C 2M out.img src
usage_error "$E" mkfs -T abc out.img src;               says abc
usage_error "$E" mkfs -T 12abc out.img src;             says 12abc
usage_error "$E" mkfs -T '' out.img src
usage_error "$E" mkfs -T 99999999999999999999 out.img src
usage_error "$E" mkfs -U garbage out.img src;           says garbage
usage_error "$E" mkfs -U 0123abcd-4567-89ef-fedc-ba987654321 out.img src   # 31 digits
usage_error "$E" mkfs -U 0123abcd-4567-89ef-fedc-ba98765432100 out.img src # 33 digits
usage_error "$E" mkfs -U 0123abcd-4567-89ef-fedc-ba98765432zz out.img src
usage_error "$E" mkfs -L 0123456789abcdef out.img src;  says 15
usage_error "$E" mkfs -L ééééééééé out.img src        # 9 characters, 18 bytes
usage_error "$E" mkfs --workers 0 out.img src;          says "worker count '0' (1 or more)"
usage_error "$E" mkfs --workers abc out.img src
usage_error "$E" mkfs --workers 2K out.img src;         says "worker count '2K'"   # a count, not a size
usage_error "$E" mkfs -E bogus out.img src
usage_error "$E" mkfs -zlz4hc -Efragments=2M out.img src; says "-Efragments=2M: not a cluster size"
usage_error "$E" mkfs -zlzma,dictsize=1Q out.img src;   says "dictsize '1Q'"
usage_error "$E" mkfs -z lz4,level=99 out.img src;      says 99
usage_error "$E" mkfs -z lz4 -C 5000 out.img src;       says 5000   # not a block multiple
usage_error "$E" mkfs -z nosuchalg out.img src;         says nosuchalg
usage_error "$E" mkfs --force-uid -1 out.img src
usage_error "$E" mkfs --force-uid 4294967296 out.img src
usage_error "$E" mkfs --force-gid abc out.img src
SOURCE_DATE_EPOCH=yesterday usage_error "$E" mkfs out.img src; says yesterday
# Not usage, but exit 2 as well: the image's directory is not there.
usage_error "$E" mkfs no-such-dir/out.img src;          says "no-such-dir/out.img: its directory does not exist"
# The arguments the other way round: a hint after the error.
usage_error "$E" mkfs src out.img;                      says "the image comes first"
# A file where the directory goes: what it is, told by its first bytes,
# and what to build from instead; nothing said of a file of no such kind
# (an EROFS image is a source of its own: t_rebuild).
tar -cf src.tar src && gzip -c src.tar >src.tar.gz && zstd -q src.tar -o src.tar.zst
usage_error "$E" mkfs out.img src.tar;                  says "src.tar is a tar archive: build from it"
usage_error "$E" mkfs out.img src.tar.gz;               says "src.tar.gz is gzip-compressed data"
usage_error "$E" mkfs out.img src.tar.zst;              says "src.tar.zst is zstd-compressed data"
usage_error "$E" mkfs out.img src/file;                 says "src/file: not a directory"
[ "$(wc -l <cli.err)" -eq 1 ] || { cat cli.err >&2; fail "a text file was given a hint"; }
rm src.tar src.tar.gz src.tar.zst
# The limits themselves are accepted: a 15-byte label, every block size.
"$E" mkfs -q -L 012345678901234 out.img src || fail "a 15-byte label was refused"
[ "$("$E" dump --json out.img | python3 -c 'import json,sys; print(json.load(sys.stdin)["label"])')" = 012345678901234 ] ||
	fail "the 15-byte label was not stored whole"
rm out.img
# A size is spelled the same wherever one is taken: -C, -E...=SIZE,
# dictsize=.
"$E" mkfs -q -zlzma,dictsize=65536 -C 65536 -Eall-fragments=16384 bytes.img src ||
	fail "sizes in bytes were refused"
"$E" mkfs -q -zlzma,dictsize=64K -C 64KiB -Eall-fragments=16K suffixed.img src ||
	fail "sizes with K suffixes were refused"
cmp bytes.img suffixed.img || fail "64K and 65536 made different images"
rm bytes.img suffixed.img
for bs in 512 1024 2048 4096; do
	"$E" mkfs -q -b $bs out.img src || fail "-b $bs was refused"
	"$E" fsck -q out.img || fail "-b $bs image fails fsck"
	rm out.img
done

note "fsck usage errors"
usage_error "$E" fsck;                       says "usage: erofskit fsck"
usage_error "$E" fsck --bogus good.img;      says bogus
usage_error "$E" fsck good.img extra;        says "usage: erofskit fsck"
usage_error "$E" fsck --extract;             says extract
usage_error "$E" fsck --workers 0 good.img;  says "worker count '0' (1 or more)"
usage_error "$E" fsck --workers x good.img
usage_error "$E" fsck --workers 0x2 good.img; says 0x2
usage_error "$E" fsck --engine bogus good.img;  says bogus
usage_error env EROFSKIT_LZMA_ENGINE=bogus "$E" fsck good.img; says EROFSKIT_LZMA_ENGINE
usage_error env EROFSKIT_ENGINE=liblzma "$E" fsck good.img; says "unknown deflate decoder"
usage_error "$E" fsck --engine lzma good.img;   says "builtin or liblzma"
"$E" fsck -q --engine liblzma --engine isal good.img || fail "a decoder for each algorithm was refused"
usage_error "$E" fsck nonexistent.img;       says nonexistent.img
usage_error "$E" fsck src;                   says src
# Extracting over existing files needs --overwrite.
"$E" fsck -q --extract ex good.img || fail "extraction failed"
usage_error "$E" fsck -q --extract ex good.img; says overwrite
usage_error "$E" fsck -q --extract good.img good.img
says "good.img: cannot extract into it: not a directory"
"$E" fsck -q --overwrite --extract ex good.img || fail "--overwrite extraction failed"
cmp src/file ex/file || fail "extracted file differs"

note "fsck: not an EROFS image -> 1"
head -c 8192 /dev/zero >zeros.img
rc=0; "$E" fsck zeros.img >cli.out 2>cli.err || rc=$?
[ $rc -eq 1 ] || fail "fsck of 8 KiB of zeros: exit $rc, expected 1"
[ -s cli.err ] || fail "fsck of 8 KiB of zeros: no message"
says zeros.img
# A cut-off image is corrupt too.
head -c 4096 good.img >cut.img
expect_exit 1 "$E" fsck -q cut.img 2>cli.err
expect_exit 0 "$E" fsck -q good.img

note "dump usage errors"
usage_error "$E" dump;                                 says "usage: erofskit dump"
usage_error "$E" dump --bogus good.img;                says bogus
usage_error "$E" dump good.img extra;                  says "usage: erofskit dump"
usage_error "$E" dump --path;                          says path
usage_error "$E" dump --path / --ls / good.img;        says exclude
usage_error "$E" dump --path /file --cat /file good.img; says exclude
usage_error "$E" dump --ls / --cat /file good.img;     says exclude
usage_error "$E" dump --ls / --ls /dir good.img;       says exclude
usage_error "$E" dump nonexistent.img;                 says nonexistent.img
expect_exit 1 "$E" dump zeros.img 2>cli.err
says zeros.img
usage_error "$E" dump --engine bogus good.img;          says bogus

note "mount usage errors (nothing is mounted)"
mkdir -p mnt
usage_error "$E" mount -o engine=bogus good.img mnt;    says engine=bogus
usage_error "$E" mount -o engine=liblzma,engine=lzma good.img mnt; says "builtin or liblzma"
usage_error "$E" mount -o cache=x good.img mnt;         says cache=x
usage_error "$E" mount -o workers=0 good.img mnt;       says "workers=0': a worker count, 1 or more"
# An option of images at URLs that a command would only ignore is refused
# by name, with who takes it.
usage_error "$E" mount -o downloads=2 good.img mnt
says "'downloads=2': only mkfs --oci takes it"
usage_error "$E" fsck -o downloads=2 good.img;          says "only mkfs --oci takes it"
usage_error "$E" push -o cache_dir=c good.img oci://127.0.0.1:1/a/b:c
says "only fsck, dump and mount take it"
usage_error "$E" mkfs --oci oci://127.0.0.1:1/a/b:c -o prefetch=all out.img
says "only fsck, dump and mount"
usage_error "$E" mkfs --oci oci://127.0.0.1:1/a/b:c -o token=t out.img
says "'token=t': only fsck"
usage_error "$E" dump -o cacert= good.img;              says "'cacert=': a name is missing"
usage_error "$E" fsck -o cache_dir= good.img;           says "'cache_dir=': a name is missing"
usage_error "$E" push -o nope good.img oci://127.0.0.1:1/a/b:c
says "(they are: insecure, cacert=FILE, header=H, timeout=S, retries=N,"
says "retries=N, credentials=FILE, plain_http)"
usage_error "$E" mount good.img;                        says "IMAGE and DIR"
usage_error "$E" mount good.img no-such-dir;            says "no-such-dir: no such directory"
usage_error "$E" mount good.img good.img;               says "good.img: not a directory"
mountpoint -q mnt && fail "a refused mount left mnt mounted"

note "fsck progress: on a terminal only"
# 55 MiB of words in one lzma file (14 MiB with the sanitizers, which
# decode some five times slower): a quarter of a second or more of work,
# so the line (redrawn at most every 0.1 s) is drawn several times.
mkdir big
python3 - big/words.txt "$(normal_or_sanitized 48 12)" <<'PY'
import random, sys
r = random.Random(5)
words = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 12)))
         for _ in range(5000)]
with open(sys.argv[1], "wb") as f:
    for _ in range(int(sys.argv[2])):
        f.write(b" ".join(r.choice(words) for _ in range(150000)))
PY
big_mib=$(python3 -c 'import os, sys; print("%.1f" % (os.path.getsize(sys.argv[1]) / 1048576))' \
	big/words.txt)
"$E" mkfs -q -zlzma big.img big
for mode in check extract; do
	args=(fsck big.img)
	[ $mode = extract ] && args=(fsck --extract "big-$mode" big.img)
	# script(1) gives the command a terminal and copies what it shows.
	TERM=xterm script -qec "$(printf '%q ' "$E" "${args[@]}")" /dev/null >tty.out ||
		fail "fsck ($mode) on a terminal failed"
	python3 - tty.out "$mode" "$big_mib" <<'PY' || { cat -v tty.out >&2; fail "fsck ($mode): no proper progress on a terminal"; }
import re, sys
out = open(sys.argv[1], "rb").read().decode()
what, total = sys.argv[2], sys.argv[3]
lines = re.findall(r"\r%s: ([0-9.]+) / ([0-9.]+) MiB \( *([0-9]+)%%\), ([0-9.]+) MiB/s" % what, out)
assert len(lines) >= 2, "fewer than two progress updates: %r" % lines
done = [float(d) for d, _, _, _ in lines]
assert done == sorted(done), "progress went backwards: %r" % done
assert all(t == total for _, t, _, _ in lines), "total is not the %s MiB of file data" % total
assert all(float(r) > 0 for _, _, _, r in lines), "no rate"
# the line is wiped before the summary is printed over it
assert "\r\x1b[K" in out and out.index("\r\x1b[K") < out.index("clean:"), "line not cleared"
PY
	"$E" "${args[@]/big-$mode/big-$mode-2}" >cli.out 2>cli.err || fail "fsck ($mode) failed"
	grep -q "MiB/s" cli.err cli.out && fail "fsck ($mode) drew progress into a file"
done
cmp big/words.txt big-extract/words.txt || fail "the file extracted on a terminal differs"

note "progress without escape sequences: NO_COLOR, TERM=dumb, no TERM"
for env in "TERM=dumb" "TERM=xterm NO_COLOR=1" "-u TERM"; do
	# shellcheck disable=SC2086
	env $env script -qec "$(printf '%q ' "$E" fsck big.img)" /dev/null >tty.out ||
		fail "fsck on a terminal ($env) failed"
	python3 - tty.out "$big_mib" <<'PY' || { cat -v tty.out >&2; fail "fsck ($env): progress not plain"; }
import re, sys
out = open(sys.argv[1], "rb").read().decode()
assert "\x1b" not in out, "an escape sequence"
lines = re.findall(r"\rcheck: ([0-9.]+) / %s MiB" % re.escape(sys.argv[2]), out)
assert len(lines) >= 2, "fewer than two progress updates: %r" % lines
# wiped with spaces, then the summary from the line's start
assert re.search(r"\r {20,}\rbig.img: clean", out), "line not cleared"
PY
done

note "mkfs progress: files and bytes (of an archive: its bytes read), a rate and the time left, on a terminal only"
# More files than progress redraws, and a few seconds of lzma work.
mkdir parts
for i in $(seq 1 40); do head -c 300000 big/words.txt | tail -c $((300000 - i * 1000)) > "parts/part$i"; done
TERM=xterm script -qec "$(printf '%q ' "$E" mkfs -zlzma parts-tty.img parts)" /dev/null >tty.out ||
	fail "mkfs on a terminal failed"
python3 - tty.out <<'PY' || { cat -v tty.out >&2; fail "mkfs: no proper progress on a terminal"; }
import re, sys
out = open(sys.argv[1], "rb").read().decode()
lines = re.findall(r"\rmkfs: ([0-9]+)/([0-9]+) files, ([0-9.]+) / ([0-9.]+) MiB \( *([0-9]+)%\), ([0-9.]+) MiB/s(, [0-9:]+ left)?", out)
assert len(lines) >= 2, "fewer than two progress updates: %r" % lines
files = [int(f) for f, _, _, _, _, _, _ in lines]
done = [float(d) for _, _, d, _, _, _, _ in lines]
assert files == sorted(files) and done == sorted(done), "progress went backwards: %r" % lines
assert all(t == "40" for _, t, _, _, _, _, _ in lines), "not the 40 files: %r" % lines
assert all(float(r) > 0 for _, _, _, _, _, r, _ in lines), "no rate"
assert any(l for *_, l in lines), "never a time left"
assert "\r\x1b[K" in out and out.index("\r\x1b[K") < out.index("parts-tty.img:"), "line not cleared"
PY
"$E" mkfs -zlzma parts-file.img parts >cli.out 2>cli.err || fail "mkfs into a file failed"
grep -q "MiB/s" cli.err cli.out && fail "mkfs drew progress into a file"
cmp parts-tty.img parts-file.img || fail "the image made on a terminal differs"
# From an archive the files' total is not known until its end: the part
# of the archive read (as stored: compressed) measures the way, when it
# is a file; from a pipe, bytes and a rate alone.
tar -C parts -cf - . | gzip -1 >parts.tar.gz
TERM=xterm script -qec "$(printf '%q ' "$E" mkfs -zlzma --tar parts-tar.img parts.tar.gz)" /dev/null >tty.out ||
	fail "mkfs --tar on a terminal failed"
python3 - tty.out "$(stat -c %s parts.tar.gz)" <<'PY' || { cat -v tty.out >&2; fail "mkfs --tar: no proper progress on a terminal"; }
import re, sys
out = open(sys.argv[1], "rb").read().decode()
size = int(sys.argv[2]) / 1048576
lines = re.findall(r"\rmkfs: (?:([0-9]+) files, )?([0-9.]+) / ([0-9.]+) MiB \( *([0-9]+)%\), ([0-9.]+) MiB/s", out)
assert len(lines) >= 2, "fewer than two progress updates: %r" % lines
assert all(abs(float(t) - size) < 0.06 for _, _, t, _, _ in lines), "not the archive's %.1f MiB: %r" % (size, lines)
done = [float(d) for _, d, _, _, _ in lines]
assert done == sorted(done) and done[-1] <= size + 0.06, "progress went backwards or past the end: %r" % lines
files = [int(f or 0) for f, *_ in lines]
assert files == sorted(files) and files[-1] > 0, "no files counted: %r" % lines
PY
TERM=xterm script -qec "gzip -dc parts.tar.gz | $(printf '%q ' "$E") mkfs -zlzma --tar parts-pipe.img -" /dev/null >tty.out ||
	fail "mkfs --tar from a pipe on a terminal failed"
grep -qE $'\rmkfs: ([0-9]+ files, )?[0-9.]+ MiB, [0-9.]+ MiB/s' tty.out && ! grep -q "MiB (" tty.out ||
	{ cat -v tty.out >&2; fail "mkfs --tar from a pipe: no progress, or a total it cannot know"; }

note "--help and --version"
for sub in "" mkfs fsck dump; do
	for h in --help -h; do
		rc=0
		# shellcheck disable=SC2086
		"$E" $sub $h >cli.out 2>cli.err || rc=$?
		[ $rc -eq 0 ] || fail "erofskit $sub $h: exit $rc"
		[ ! -s cli.err ] || fail "erofskit $sub $h wrote to stderr"
		grep -q "^usage: erofskit ${sub:-COMMAND}" cli.out || fail "erofskit $sub $h: no usage line"
	done
done
grep -q "^usage: erofskit mkfs \[options\] IMAGE SOURCE_DIR" <("$E" mkfs --help) || fail "mkfs usage line"
grep -q "^usage: erofskit fsck \[options\] IMAGE" <("$E" fsck --help) || fail "fsck usage line"
grep -q "^usage: erofskit dump \[options\] IMAGE" <("$E" dump --help) || fail "dump usage line"
# the top-level help lists every command
top_help=$("$E" --help)
for c in mkfs fsck dump; do
	grep -qE "^  $c " <<<"$top_help" || fail "erofskit --help does not list $c"
done
v=$("$E" --version) || fail "erofskit --version failed"
want=$(sed -n 's/^project(erofskit VERSION \([0-9.]*\).*/\1/p' "${EROFSKIT_SRC:-$HERE/../..}/CMakeLists.txt")
[ "$v" = "erofskit $want" ] || fail "erofskit --version says '$v', expected 'erofskit $want'"
[ "$("$E" -V)" = "$v" ] || fail "-V differs from --version"
echo PASS

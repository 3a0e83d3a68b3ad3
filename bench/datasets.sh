#!/bin/bash
# The benchmark data sets, built from this machine (as root):
#
#   rootfs        debootstrap --variant=minbase bookworm, from the Debian
#                 mirror in this machine's apt sources (MIRROR=URL to
#                 choose another); the downloaded .debs are removed
#   one/testfile  298844160 bytes (285 MiB) of real files from /usr/lib
#                 and /usr/share, one after the other in a fixed
#                 pseudo-random order (the file bench/fio.sh reads)
#   src           /usr/share/doc, /usr/include and the python3.11 standard
#                 library without __pycache__: many small files
#
#   bench/datasets.sh [DIR]     DIR: $BENCH_DATA, else /tmp/data
#
# A data set already in DIR is left as it is; each is built beside its
# final name and renamed when complete.  DIR/STATS.md gets the counts and
# sizes.  What the sets hold depends on what is installed here: compare
# tools side by side in one run, not across machines.
set -euo pipefail

DATA=${1:-${BENCH_DATA:-/tmp/data}}
TESTFILE_SIZE=298844160
PYLIB=/usr/lib/python3.11

[ "$(id -u)" = 0 ] || { echo "datasets.sh: needs root (debootstrap)" >&2; exit 1; }
mkdir -p "$DATA"
DATA=$(cd "$DATA" && pwd)

# A set being built lives in DIR/NAME.partial.  On failure, unmount
# whatever debootstrap left mounted in it, then remove it.
cleanup() {
	local p m
	for p in "$DATA"/*.partial; do
		[ -e "$p" ] || continue
		awk -v p="$p/" 'index($2 "/", p) == 1 {print $2}' /proc/mounts | sort -r |
			while read -r m; do umount "$m" || umount -l "$m"; done
		if awk -v p="$p/" 'index($2 "/", p) == 1 {found=1} END {exit !found}' /proc/mounts; then
			echo "datasets.sh: $p still has mounts; not removed" >&2
		else
			rm -rf "$p"
		fi
	done
}
trap cleanup EXIT

# start NAME: prints the fresh directory to build NAME in.
start() {
	rm -rf "$DATA/$1.partial"
	mkdir "$DATA/$1.partial"
	echo "$DATA/$1.partial"
}
# finish NAME: the built set takes its name.
finish() {
	mv "$DATA/$1.partial" "$DATA/$1"
}

# The first URI of an enabled apt source that serves bookworm itself.
apt_mirror() {
	python3 - <<'PY'
import glob, sys

def deb822(path):
    text = open(path).read()
    for block in text.split("\n\n"):
        f = {}
        for line in block.splitlines():
            if line.startswith("#") or ":" not in line or line[0].isspace():
                continue
            key, value = line.split(":", 1)
            f[key.strip().lower()] = value.split()
        if ("deb" in f.get("types", []) and "bookworm" in f.get("suites", [])
                and f.get("enabled", ["yes"]) != ["no"] and f.get("uris")):
            return f["uris"][0]

def one_line(path):
    for line in open(path):
        words = line.split("#", 1)[0].split()
        if words[:1] != ["deb"]:
            continue
        words = words[1:]
        if words and words[0].startswith("["):          # [options]
            while words and not words[0].endswith("]"):
                words = words[1:]
            words = words[1:]
        if len(words) >= 2 and words[1] == "bookworm":
            return words[0]

for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    uri = deb822(path)
    if uri:
        print(uri)
        sys.exit(0)
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        uri = one_line(path)
    except FileNotFoundError:
        continue
    if uri:
        print(uri)
        sys.exit(0)
sys.exit("no apt source for bookworm")
PY
}

# --- rootfs ---------------------------------------------------------------
if [ -d "$DATA/rootfs" ]; then
	echo "rootfs: already there" >&2
else
	command -v debootstrap >/dev/null || {
		echo "datasets.sh: installing debootstrap" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >/dev/null
	}
	mirror=${MIRROR:-$(apt_mirror)}
	echo "rootfs: debootstrap --variant=minbase bookworm from $mirror" >&2
	p=$(start rootfs)
	debootstrap --variant=minbase bookworm "$p" "$mirror" >"$DATA/debootstrap.log" 2>&1 ||
		{ tail -20 "$DATA/debootstrap.log" >&2; echo "datasets.sh: debootstrap failed" >&2; exit 1; }
	find "$p/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -delete
	finish rootfs
fi

# --- one/testfile ---------------------------------------------------------
if [ -f "$DATA/one/testfile" ] && [ "$(stat -c %s "$DATA/one/testfile")" = $TESTFILE_SIZE ]; then
	echo "one/testfile: already there" >&2
else
	echo "one/testfile: $TESTFILE_SIZE bytes of /usr/lib and /usr/share" >&2
	rm -rf "$DATA/one"
	p=$(start one)
	# The order: files sorted by a hash of their path, so the same
	# installed files always give the same bytes.  The last file is cut.
	python3 - "$p/testfile" "$TESTFILE_SIZE" "$DATA/one.list" <<'PY'
import hashlib, os, stat, sys

out, want, listing = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = []
for top in ("/usr/lib", "/usr/share"):
    dev = os.lstat(top).st_dev
    for d, dirs, names in os.walk(top):
        dirs[:] = [n for n in dirs if os.lstat(os.path.join(d, n)).st_dev == dev]
        for n in names:
            path = os.path.join(d, n)
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                files.append(path)
files.sort(key=lambda p: hashlib.sha256(b"erofskit bench\0" + os.fsencode(p)).digest())
left = want
with open(out, "wb") as f, open(listing, "w") as used:
    for path in files:
        if not left:
            break
        try:
            with open(path, "rb") as src:
                data = src.read(left)
        except OSError:
            continue
        f.write(data)
        left -= len(data)
        used.write(path + "\n")
if left:
    sys.exit("only %d of %d bytes in /usr/lib and /usr/share" % (want - left, want))
PY
	finish one
fi

# --- src ------------------------------------------------------------------
if [ -d "$DATA/src" ]; then
	echo "src: already there" >&2
else
	echo "src: /usr/share/doc, /usr/include, $PYLIB" >&2
	[ -d "$PYLIB" ] || { echo "datasets.sh: no $PYLIB" >&2; exit 1; }
	p=$(start src)
	cp -a /usr/share/doc "$p/doc"
	cp -a /usr/include "$p/include"
	cp -a "$PYLIB" "$p/$(basename "$PYLIB")"
	find "$p" -depth -type d -name __pycache__ -exec rm -rf {} +
	finish src
fi

# --- STATS.md -------------------------------------------------------------
count() { find "$1" -xdev -type "$2" | wc -l; }
{
	echo "# Benchmark data sets"
	echo
	echo "Made by bench/datasets.sh."
	echo
	echo "| data set | regular files | directories | symlinks | bytes in files | MiB on disk |"
	echo "|---|---|---|---|---|---|"
	for ds in rootfs one src; do
		d=$DATA/$ds
		bytes=$(find "$d" -xdev -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
		echo "| $ds | $(count "$d" f) | $(count "$d" d) | $(count "$d" l) | $bytes | $(du -sxm "$d" | cut -f1) |"
	done
	echo
	echo "one/testfile sha256: $(sha256sum <"$DATA/one/testfile" | cut -d' ' -f1)"
} >"$DATA/STATS.md"
cat "$DATA/STATS.md"

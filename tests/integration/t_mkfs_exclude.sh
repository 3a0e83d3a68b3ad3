# mkfs --exclude-path and --exclude-regex, read as Debian's mkfs.erofs
# reads them: a path under the source without a leading '/', compared
# whole or searched by a POSIX extended regular expression; a directory
# left out takes all under it.  For each set of rules the kernel's view
# of erofskit's image lists what mkfs.erofs 1.5's does (and what the rule
# must leave out is gone); a hard link keeps the count of the names left;
# the drop-in name takes the same options; a rule that matches nothing is
# warned about; a bad pattern and an archive source are refused.
. "$(dirname "$0")/lib.sh"

command -v mkfs.erofs >/dev/null || fail "mkfs.erofs (Debian erofs-utils) is not installed"
E=$EROFSKIT
cd "$T"
mkdir -p src/a/b/deep src/c "src/names/sp ace"
echo 1 >src/a/b/f
echo 2 >src/a/b/deep/g
echo 3 >src/c/h
echo 4 >src/top
echo 5 >src/c/top.log
echo 6 >"src/names/sp ace/f.log"
ln src/c/h src/a/h-link
ln -s a/b src/lnk

# listing IMAGE: the kernel's view, a line per path with its type.
listing() {
	kmount "$1" "$T/mnt"
	(cd "$T/mnt" && find . -printf '%p %y\n' | LC_ALL=C sort)
	kumount "$T/mnt"
}

# rules GONE KEPT -- OPTION...: both tools with the options; their
# listings equal, GONE not in it, KEPT in it.
rules() {
	local gone=$1 kept=$2
	shift 3
	rm -f ours.img theirs.img
	"$E" mkfs -q "$@" ours.img src 2>err.txt || fail "mkfs $*: $(cat err.txt)"
	"$E" fsck -q ours.img || fail "mkfs $*: the image is not clean"
	mkfs.erofs --quiet "$@" theirs.img src >/dev/null 2>&1 || fail "mkfs.erofs $* failed"
	listing ours.img >ours.txt
	listing theirs.img >theirs.txt
	diff theirs.txt ours.txt >&2 || fail "$*: erofskit's image lists other paths than mkfs.erofs's"
	grep -q "^\./$gone " ours.txt && fail "$*: $gone is still in the image"
	grep -q "^\./$kept " ours.txt || fail "$*: $kept is gone too"
	return 0
}

note "paths and patterns, as mkfs.erofs reads them"
rules a/b/f a -- --exclude-path=a/b
rules a/b/deep/g a/b/f -- --exclude-path=a/b/deep
rules top c/top.log -- --exclude-path=top --exclude-path=c/h
rules c/top.log top -- --exclude-regex='\.log$'
rules "names/sp ace" names -- --exclude-path="names/sp ace"
rules c/h top -- --exclude-regex=^a --exclude-path=c
rules a/b lnk -- --exclude-regex='^a/b$'
# a leading '/' matches nothing (mkfs.erofs ignores it as silently;
# erofskit says so)
rules none a/b/f -- --exclude-path=/a/b
grep -q "warning: --exclude-path '/a/b' matched nothing in src" err.txt ||
	fail "no warning for a rule that matched nothing: $(cat err.txt)"

note "a hard link with one name left out counts the other alone"
"$E" mkfs -q --exclude-path=c/h one.img src
kmount one.img "$T/mnt"
[ "$(stat -c %h "$T/mnt/a/h-link")" = 1 ] || fail "a/h-link has $(stat -c %h "$T/mnt/a/h-link") links, not 1"
[ "$(cat "$T/mnt/a/h-link")" = 3 ] || fail "a/h-link lost its data"
kumount "$T/mnt"

note "the drop-in name takes them, for the same image"
"$EROFSKIT_BUILD/dropin/mkfs.erofs" --quiet --exclude-path=a/b --exclude-regex='\.log$' drop.img src ||
	fail "mkfs.erofs (drop-in) with --exclude-path/--exclude-regex failed"
"$E" mkfs -q --exclude-path a/b --exclude-regex '\.log$' native.img src
cmp drop.img native.img || fail "the drop-in's image differs from erofskit mkfs's"

note "refused: a pattern that is not one, an archive source"
expect_exit 2 "$E" mkfs -q --exclude-regex='(' bad.img src 2>err.txt
grep -q "exclude-regex '(':" err.txt || fail "a bad pattern: $(cat err.txt)"
tar -C src -cf src.tar .
expect_exit 2 "$E" mkfs -q --tar --exclude-path=a bad.img src.tar 2>err.txt
grep -q "directory source" err.txt || fail "--exclude-path with --tar: $(cat err.txt)"
[ ! -e bad.img ] || fail "an image was left behind"
echo PASS

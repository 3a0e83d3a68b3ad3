# The man pages (man/*.scd, built into BUILD/man by scdoc): each renders
# with man(1) without a warning, and documents what the tool says it does:
# every command `erofskit --help` lists heads an item of erofskit(1) and
# has its page erofskit-COMMAND(1), every option of `erofskit COMMAND
# --help` (-x, --long, and the names of mkfs -E's and mount -o's lists)
# heads an item of that page, and every ek_*() erofskit(3) names is a
# function of include/erofskit.  The check is tried on a page with one
# item taken out first, and must then fail.
. "$(dirname "$0")/lib.sh"

: "${EROFSKIT_BUILD:?EROFSKIT_BUILD must name the build directory}"
: "${EROFSKIT_SRC:?EROFSKIT_SRC must name the source directory}"
MAN=$EROFSKIT_BUILD/man
export MANWIDTH=80 LC_ALL=C.UTF-8
unset MANPAGER PAGER MAN_KEEP_FORMATTING

commands=$("$EROFSKIT" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || fail "erofskit --help lists no commands"
pages="erofskit.1 erofskit.3"
for c in $commands; do
	pages+=" erofskit-$c.1"
done

note "every page is built, current and renders without warnings"
for p in $pages; do
	src=$EROFSKIT_SRC/man/$p.scd
	[ -f "$src" ] || fail "no man page source man/$p.scd"
	[ -s "$MAN/$p" ] || fail "$MAN/$p was not built (configured with -DEROFSKIT_MAN=OFF?)"
	[ "$MAN/$p" -nt "$src" ] || [ ! "$src" -nt "$MAN/$p" ] ||
		fail "$MAN/$p is older than man/$p.scd: build again"
	warnings=$(man -l --warnings "$MAN/$p" 2>&1 >/dev/null) ||
		fail "man -l $p failed: $warnings"
	[ -z "$warnings" ] || fail "man -l $p warns: $warnings"
	man -E ascii -l "$MAN/$p" >"$T/$p.txt" 2>/dev/null || fail "man -l $p failed"
	grep -q '^NAME' "$T/$p.txt" || fail "$p renders without a NAME section"
done
for src in "$EROFSKIT_SRC"/man/*.scd; do
	p=$(basename "$src" .scd)
	case " $pages " in *" $p "*) ;; *) fail "man/$p.scd documents no command of erofskit --help" ;; esac
done

note "help texts against the pages"
"$EROFSKIT" --help >"$T/erofskit.help"
for c in $commands; do
	"$EROFSKIT" "$c" --help >"$T/$c.help" || fail "erofskit $c --help failed"
done
# shellcheck disable=SC2086  # one argument per command
python3 - "$T" "$EROFSKIT_SRC/include/erofskit" $commands <<'PY' || fail "the man pages and the help texts disagree"
import glob, os, re, sys

tmp, include, commands = sys.argv[1], sys.argv[2], sys.argv[3:]

def help_options(text):
    """What an `erofskit CMD --help` lists: the options (-x, --long) at
    the head of its lines, and the names of the comma lists' items, as
    -E's and -o's: an indented name with a value (name=..., name[=...]),
    or a bare name followed by two spaces."""
    opts, on = [], False
    for line in text.splitlines():
        if line.startswith("options:"):
            on = True
            continue
        if on and line and not line.startswith(" "):
            on = False
        if not on or not line.strip():
            continue
        body = line.lstrip()
        if body.startswith("-"):
            for tok in body.split():
                if not tok.startswith("-"):
                    break
                opts.append(tok.rstrip(","))
                if not tok.endswith(","):
                    break
            continue
        m = (re.match(r"([a-z][a-z_-]*\[?=\S*) ", body) or
             re.match(r"([a-z][a-z_-]*)  ", body))
        if m:
            for item in m.group(1).split(","):
                opts.append(re.split(r"[\[=]", item)[0])
    return opts

def items(text):
    """The names at the head of a rendered page's items: a line whose next
    non-empty line is indented deeper; "-q, --quiet" and "uid=N, gid=N"
    head with each of their names."""
    lines = text.splitlines()
    names = set()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        nxt = next((l for l in lines[i + 1:] if l.strip()), "")
        indent = len(line) - len(line.lstrip())
        if len(nxt) - len(nxt.lstrip()) <= indent:
            continue
        for part in line.strip().split(", "):
            names.add(re.split(r"[ \[=]", part, maxsplit=1)[0])
    return names

def missing(page_text, wanted):
    have = items(page_text)
    return [w for w in wanted if w not in have]

def read(name):
    with open(os.path.join(tmp, name), encoding="utf-8") as f:
        return f.read()

bad = []
top = read("erofskit.1.txt")
for m in missing(top, commands):
    bad.append("erofskit.1: no item for the command %s" % m)

for c in commands:
    wanted = help_options(read(c + ".help"))
    if not any(w.startswith("-") for w in wanted):
        bad.append("erofskit %s --help: no options found in it" % c)
    page = read("erofskit-%s.1.txt" % c)
    for m in missing(page, wanted):
        bad.append("erofskit-%s.1: no item for %s, which erofskit %s --help lists" % (c, m, c))
    # The check can fail: take one option's item out of the page.
    victim = [w for w in wanted if w.startswith("--")][-1]
    cut = "\n".join(l for l in page.splitlines()
                    if not re.match(r"\s*(\S+, )*%s\b" % re.escape(victim), l))
    if victim not in missing(cut, wanted):
        bad.append("self-test: erofskit-%s.1 without its %s item passed" % (c, victim))

# erofskit(3) names only functions of the headers.
api = set()
for h in glob.glob(os.path.join(include, "*.h")):
    with open(h, encoding="utf-8") as f:
        api |= set(re.findall(r"EK_API[^;(]*?\b(ek_\w+)\s*\(", f.read()))
lib = read("erofskit.3.txt")
named = set(re.findall(r"\b(ek_\w+)\(", lib))
for n in sorted(named - api):
    bad.append("erofskit.3 names %s(), which include/erofskit does not declare" % n)
for n in ("ek_open", "ek_close", "ek_lookup", "ek_inode_get", "ek_inode_put",
          "ek_read", "ek_map", "ek_build", "ek_check", "ek_strerror"):
    if n not in named:
        bad.append("erofskit.3 does not describe %s()" % n)

for b in bad:
    print("FAIL: " + b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY
note "ok"

#!/usr/bin/env python3
"""The library's structure, checked on its object files.

Edges are read from the symbols each object defines and uses (nm): file A
depends on file B when A uses a function or table that B defines.  Fails
(exit 1, each finding on a line) when

  - files call each other in a circle (a strongly connected set of files);
  - a directory reaches one it may not (the layers below);
  - src/check uses anything but the public ek_ API (of src/read, and the
    names of src/codec's table);
  - a function or table leaves its file without anyone else using it
    (it should be static, or it is dead); the tests' sources count as
    users (a decoder tested on its own is exported for them).

usage: layers.py OBJECT... [--tests DIR...]
       (the erofskit_objects object files; the tests' source directories)
"""
import collections
import os
import re
import subprocess
import sys

# Which directories each directory may use: calls go down the layers.
ALLOWED = {
    "util": set(),
    "format": {"util"},
    "io": {"util"},
    "codec": {"util", "format"},
    "read": {"util", "format", "io", "codec"},
    # io: a registry's image (ocipull); read: a source image, through the
    # reader's public calls (imagesource), as check/ reads an image
    "write": {"util", "format", "io", "codec", "read"},
    "check": {"util", "read", "codec"},
}


def unit_of(obj):
    """'read/zdata' for .../src/read/zdata.c.o"""
    return os.path.basename(os.path.dirname(obj)) + "/" + \
        os.path.basename(obj).rsplit(".c.o", 1)[0]


def read_symbols(objs):
    defined, used = {}, collections.defaultdict(set)
    for obj in objs:
        unit = unit_of(obj)
        out = subprocess.run(["nm", obj], capture_output=True, text=True,
                             check=True).stdout
        for line in out.splitlines():
            f = line.split()
            if len(f) == 3 and f[1] in "TDBR":
                defined[f[2]] = unit
            elif len(f) == 2 and f[0] == "U":
                used[unit].add(f[1])
    return defined, used


def circles(graph):
    """Strongly connected sets of more than one file (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    nodes = set(graph) | {w for ws in graph.values() for w in ws}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def test_sources(dirs):
    text = []
    for d in dirs:
        for base, _, files in os.walk(d):
            for f in files:
                if f.endswith((".c", ".h")):
                    with open(os.path.join(base, f), encoding="utf-8") as fh:
                        text.append(fh.read())
    return "\n".join(text)


def main(objs, test_dirs):
    defined, used = read_symbols(objs)
    tests = test_sources(test_dirs)
    graph = collections.defaultdict(set)
    why = {}
    problems = []
    users = collections.defaultdict(set)
    for unit, symbols in used.items():
        for sym in symbols:
            target = defined.get(sym)
            if not target:
                continue        # a system library's
            users[sym].add(unit)
            if target == unit:
                continue
            graph[unit].add(target)
            why.setdefault((unit, target), sym)
            src, dst = unit.split("/")[0], target.split("/")[0]
            if src != dst and dst not in ALLOWED.get(src, set()):
                problems.append(f"layer: {unit} uses {sym} of {target} "
                                f"({src}/ may use {', '.join(sorted(ALLOWED.get(src, ()))) or 'nothing'})")
            if src == "check" and dst in ("read", "codec") and not sym.startswith("ek_"):
                problems.append(f"layer: {unit} uses {sym} of {target}, not the public API")
    for comp in circles(graph):
        edges = [f"{a} -> {b} ({why[(a, b)]})" for a in comp for b in sorted(graph[a])
                 if b in comp]
        problems.append("circle: " + ", ".join(comp) + "\n    " + "\n    ".join(edges))
    for sym, unit in sorted(defined.items()):
        if sym.startswith(("ek_", "__")):
            continue            # the public API (the exports test's), a sanitizer's own
        if not users[sym] - {unit} and not re.search(r"\b%s\b" % re.escape(sym), tests):
            problems.append(f"unused outside its file: {sym} ({unit}): make it static or remove it")
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} problem(s) in {len(objs)} object files")
        return 1
    print(f"{len(objs)} files, {sum(len(v) for v in graph.values())} dependencies: "
          "no circles, every call goes down the layers")
    return 0


if __name__ == "__main__":
    # CMake hands $<TARGET_OBJECTS:...> over as one ';'-separated list.
    args = [a for arg in sys.argv[1:] for a in arg.split(";") if a]
    dirs = []
    if "--tests" in args:
        dirs = args[args.index("--tests") + 1:]
        args = args[:args.index("--tests")]
    if not args:
        sys.exit(__doc__)
    sys.exit(main(args, dirs))

#!/usr/bin/env python3
"""The shared library exports the public API and nothing else.

Reads every function that include/erofskit/*.h marks EK_API, and the
dynamic symbols the shared library defines (nm -D --defined-only).  Fails
(exit 1, each finding on a line) on a symbol no public header declares and
on a declared function the library does not export.

usage: exports.py LIBRARY.so INCLUDE_DIR
"""
import os
import re
import subprocess
import sys

DECLARATION = re.compile(r"^EK_API\b[^(]*?\b(ek_[a-z0-9_]+)\s*\(", re.M)


def declared(include_dir):
    names = set()
    for base, _, files in os.walk(include_dir):
        for f in files:
            if f.endswith(".h"):
                with open(os.path.join(base, f), encoding="utf-8") as fh:
                    names.update(DECLARATION.findall(fh.read()))
    return names


def exported(library):
    out = subprocess.run(["nm", "-D", "--defined-only", library],
                         capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] not in "aA":   # not absolute (version) symbols
            names.add(fields[2])
    return names


def main(library, include_dir):
    public, shipped = declared(include_dir), exported(library)
    if not public:
        print(f"no EK_API declaration found under {include_dir}")
        return 1
    problems = [f"exported but not public: {s}" for s in sorted(shipped - public)]
    problems += [f"public but not exported: {s}" for s in sorted(public - shipped)]
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(shipped)} symbols exported, each declared EK_API in {include_dir}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))

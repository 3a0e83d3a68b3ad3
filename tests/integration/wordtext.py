"""Compressible text for the tests' trees and archives: words of random
letters joined by spaces, from the caller's random.Random (so a seed
gives the same bytes everywhere).  Used as PYTHONPATH="$HERE" python3."""


def words(r, count, letters=b"abcdefghijklmnopqrstuvwxyz", longest=9):
    """count words of 2 to longest letters."""
    return [bytes(r.choice(letters) for _ in range(r.randint(2, longest)))
            for _ in range(count)]


def text(r, vocabulary, size):
    """size bytes of vocabulary's words, each followed by a space."""
    out = bytearray()
    while len(out) < size:
        out += r.choice(vocabulary) + b" "
    return bytes(out[:size])

"""kg_match_baseline.py: the baseline for `ethost kg` — forward maximum matching of a knowledge graph's entity
names over stdin lines in Python (a set of names, the longest window first), the way K-BERT-style code looks
entities up. Same rules as ethost: subjects and objects, at least 2 characters, ASCII letters/digits may not
touch another at a match's edges.

Usage: kg_match_baseline.py graph.spo < lines > mentions   (stats to stderr; graph loading excluded from MB/s)
"""
import sys
import time

WS = " \t\r\n\f\v"


def alnum(c):
    return c.isascii() and c.isalnum()


def load(path):
    names = set()
    for line in open(path, encoding="utf-8"):
        f = line.rstrip("\n").rstrip("\r")
        f = f.split(" ||| ") if " ||| " in f else f.split("\t")
        if len(f) != 3:
            continue
        s, p, o = (x.strip(WS) for x in f)
        if s and p and o:
            names.add(s)
            names.add(o)
    return names


def mentions(text, names, maxlen, min_chars=2):
    out, i, n = [], 0, len(text)
    while i < n:
        if i > 0 and alnum(text[i]) and alnum(text[i - 1]):
            i += 1
            continue
        for L in range(min(maxlen, n - i), min_chars - 1, -1):
            w = text[i:i + L]
            if w in names and not (i + L < n and alnum(w[-1]) and alnum(text[i + L])):
                out.append(w)
                i += L
                break
        else:
            i += 1
    return out


def main():
    names = load(sys.argv[1])
    maxlen = max(len(x) for x in names)
    lines = [l.rstrip("\n").rstrip("\r") for l in sys.stdin]
    nbytes = sum(len(l.encode("utf-8")) for l in lines)
    t0 = time.perf_counter()
    res = [mentions(l, names, maxlen) for l in lines]
    dt = time.perf_counter() - t0
    sys.stdout.write("".join(" ".join(m) + "\n" for m in res))
    sys.stderr.write("python: %d lines, %.3f MB in %.3f s (%.2f MB/s)\n" % (len(lines), nbytes / 1e6, dt,
                                                                          nbytes / 1e6 / dt))


main()

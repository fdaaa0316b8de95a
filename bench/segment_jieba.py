"""segment_jieba.py: the baseline for ethost segment — jieba 0.42.1 cut(HMM=False) over stdin lines.

Prints "jieba: <lines> lines, <MB> MB in <s> s (<MB/s> MB/s)" to stderr (dictionary load excluded, as ethost's
--stats does) and the words, space-separated, to stdout (whitespace tokens dropped, as ethost segment does).
Run with /usr/bin/python3 (Debian's python3-jieba).
"""
import logging
import sys
import time

import jieba

jieba.setLogLevel(logging.ERROR)
jieba.initialize()
lines = [l.rstrip("\n").rstrip("\r") for l in sys.stdin]
nbytes = sum(len(l.encode("utf-8")) for l in lines)
out = []
t0 = time.perf_counter()
for l in lines:
    out.append(list(jieba.cut(l, HMM=False)))
dt = time.perf_counter() - t0
sys.stdout.write("".join(" ".join(w for w in ws if not w.isspace()) + "\n" for ws in out))
sys.stderr.write("jieba: %d lines, %.3f MB in %.3f s (%.2f MB/s)\n" % (len(lines), nbytes / 1e6, dt, nbytes / 1e6 / dt))

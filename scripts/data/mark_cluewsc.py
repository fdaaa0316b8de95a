#!/usr/bin/python3
"""mark_cluewsc.py: CLUEWSC rows with the candidate and the pronoun marked in the text, as flat fields.

Usage: scripts/data/mark_cluewsc.py SRC_DIR DST_DIR  (e.g. ../shared/data/fewclue/cluewsc data/fewclue/cluewsc)
For train_few_all, dev_few_all and test_public it keeps every field and adds
  text_marked  the text with the candidate (span1) wrapped in _..._ and the pronoun (span2) in [...]
               (the CLUE WSC baseline's marks), at their character offsets;
  span1_text, span2_text  target.span1_text / target.span2_text as top-level strings.
A row whose offsets do not point at its span texts is an error (none do in FewCLUE @ 62a02c6f).
"""
import json
import sys


def mark(row):
    t, text = row["target"], row["text"]
    marks = [(t["span1_index"], len(t["span1_text"]), "_", "_"), (t["span2_index"], len(t["span2_text"]), "[", "]")]
    for start, n, _, _ in marks:
        if text[start:start + n] not in (t["span1_text"], t["span2_text"]):
            raise SystemExit(f"row {row.get('idx')}: offset {start} does not hold its span")
    out = text
    for start, n, left, right in sorted(marks, reverse=True):  # right to left: offsets stay valid
        out = out[:start] + left + out[start:start + n] + right + out[start + n:]
    row = dict(row)
    row["text_marked"], row["span1_text"], row["span2_text"] = out, t["span1_text"], t["span2_text"]
    return row


def main(src, dst):
    for name in ("train_few_all", "dev_few_all", "test_public"):
        with open(f"{src}/{name}.json", encoding="utf-8") as f, open(f"{dst}/{name}.json", "w", encoding="utf-8") as out:
            for line in f:
                if line.strip():
                    out.write(json.dumps(mark(json.loads(line)), ensure_ascii=False) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2])

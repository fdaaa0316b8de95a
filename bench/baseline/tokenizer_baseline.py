#!/usr/bin/env python3
# tokenizer_baseline.py: pure-Python BERT WordPiece tokenizer like HF BertTokenizer of transformers 4.30.2.
"""Baseline for bench/tokenizer_bench.cpp (transformers itself is not installed; standard library only).

The algorithm is the one of HF's slow tokenizer: PreTrainedTokenizer.tokenize() (per-character lower-casing of
everything but special tokens, special tokens split out of the text), BasicTokenizer (_clean_text,
_tokenize_chinese_chars, NFC, whitespace split, never_split, lower + _run_strip_accents, _run_split_on_punc),
WordpieceTokenizer (greedy longest match, 100-character limit), then [CLS] a [SEP] (b [SEP]) with
longest_first truncation.

Usage:
  tokenizer_baseline.py --vocab VOCAB --texts FILE.jsonl --mode ids [--max_length N] [--cased]
      prints {"input_ids": [...], "token_type_ids": [...], "attention_mask": [...]} per input line
  tokenizer_baseline.py --vocab VOCAB --texts FILE.jsonl --mode bench [--reps N]
      prints one JSON object: seconds per repetition, texts, bytes, tokens, and an FNV-1a digest of the ids
Each line of FILE.jsonl is a JSON string (one text) or a 2-element list (a pair).
"""
import argparse
import json
import re
import sys
import time
import unicodedata

SPECIAL_TOKENS = ["[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"]
MAX_CHARS_PER_WORD = 100


def load_vocab(path):
    vocab = {}
    with open(path, "r", encoding="utf-8") as f:  # text mode: universal newlines, as HF's load_vocab
        for index, token in enumerate(f.readlines()):
            vocab[token.rstrip("\n")] = index
    return vocab


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch) in ("Cc", "Cf")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
              (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_chinese(cp):
    for lo, hi in CJK_RANGES:
        if lo <= cp <= hi:
            return True
    return False


class BertTokenizerRef:
    def __init__(self, vocab, do_lower_case=True, strip_accents=None, tokenize_chinese_chars=True,
                 never_split=()):
        self.vocab = vocab
        self.do_lower_case = do_lower_case
        self.strip_accents = strip_accents
        self.tokenize_chinese_chars = tokenize_chinese_chars
        self.user_never_split = set(never_split)
        self.never_split = self.user_never_split | set(SPECIAL_TOKENS)
        alternatives = "|".join(re.escape(t) for t in SPECIAL_TOKENS)
        self.lower_re = re.compile("(" + alternatives + ")|(.+?)")  # HF: no DOTALL
        self.special_re = re.compile("(" + alternatives + ")")
        self.unk_id = vocab["[UNK]"]

    # PreTrainedTokenizer.tokenize
    def tokenize(self, text):
        if self.do_lower_case:
            text = self.lower_re.sub(lambda m: m.group(1) or m.group(2).lower(), text)
        parts = self.special_re.split(text)  # odd positions hold the special tokens
        for i in range(1, len(parts), 2):  # specials strip the whitespace next to them
            parts[i - 1] = parts[i - 1].rstrip()
            parts[i + 1] = parts[i + 1].lstrip()
        out = []
        for i, part in enumerate(parts):
            if i % 2:
                out.append(part)
            elif part:
                for word in self.basic_tokenize(part):
                    if word in self.user_never_split:
                        out.append(word)
                    else:
                        out.extend(self.wordpiece(word))
        return out

    def basic_tokenize(self, text):
        chars = []
        for ch in text:
            cp = ord(ch)
            if cp == 0 or cp == 0xFFFD or is_control(ch):
                continue
            if is_whitespace(ch):
                chars.append(" ")
            elif self.tokenize_chinese_chars and is_chinese(cp):
                chars.append(" " + ch + " ")
            else:
                chars.append(ch)
        text = unicodedata.normalize("NFC", "".join(chars))
        words = []
        for token in text.strip().split():
            if token not in self.never_split:
                if self.do_lower_case:
                    token = token.lower()
                    if self.strip_accents is not False:
                        token = self.remove_accents(token)
                elif self.strip_accents:
                    token = self.remove_accents(token)
            words.extend(self.split_on_punctuation(token))
        return " ".join(words).strip().split()

    @staticmethod
    def remove_accents(token):
        return "".join(ch for ch in unicodedata.normalize("NFD", token) if unicodedata.category(ch) != "Mn")

    def split_on_punctuation(self, token):
        if token in self.never_split:
            return [token]
        pieces, current = [], []
        for ch in token:
            if is_punctuation(ch):
                if current:
                    pieces.append("".join(current))
                    current = []
                pieces.append(ch)
            else:
                current.append(ch)
        if current:
            pieces.append("".join(current))
        return pieces

    def wordpiece(self, word):
        if len(word) > MAX_CHARS_PER_WORD:
            return ["[UNK]"]
        pieces, start = [], 0
        while start < len(word):
            end, found = len(word), None
            while start < end:
                sub = word[start:end] if start == 0 else "##" + word[start:end]
                if sub in self.vocab:
                    found = sub
                    break
                end -= 1
            if found is None:
                return ["[UNK]"]
            pieces.append(found)
            start = end
        return pieces

    def ids(self, tokens):
        return [self.vocab.get(t, self.unk_id) for t in tokens]

    def encode(self, text, text_b=None, max_length=0):
        a = self.ids(self.tokenize(text))
        b = self.ids(self.tokenize(text_b)) if text_b is not None else None
        if max_length:
            remove = len(a) + (len(b) + 3 if b is not None else 2) - max_length
            for _ in range(max(0, remove)):  # longest_first, one token at a time; ties cut the second
                if b is None or len(a) > len(b):
                    a = a[:-1]
                else:
                    b = b[:-1]
        cls, sep = self.vocab["[CLS]"], self.vocab["[SEP]"]
        ids = [cls] + a + [sep]
        types = [0] * len(ids)
        if b is not None:
            ids += b + [sep]
            types += [1] * (len(b) + 1)
        return {"input_ids": ids, "token_type_ids": types, "attention_mask": [1] * len(ids)}


def fnv1a(values, h):
    for v in values:
        h = ((h ^ (v & 0xFFFFFFFFFFFFFFFF)) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--texts", required=True)
    ap.add_argument("--mode", choices=["ids", "bench"], default="ids")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--max_length", type=int, default=0)
    ap.add_argument("--cased", action="store_true")
    args = ap.parse_args()

    tok = BertTokenizerRef(load_vocab(args.vocab), do_lower_case=not args.cased)
    with open(args.texts, "r", encoding="utf-8", newline="\n") as f:
        items = [json.loads(line) for line in f if line.strip()]
    items = [(x, None) if isinstance(x, str) else (x[0], x[1]) for x in items]

    if args.mode == "ids":
        out = sys.stdout
        for a, b in items:
            out.write(json.dumps(tok.encode(a, b, args.max_length)) + "\n")
        return

    seconds, cpu_seconds, tokens, digest = [], [], 0, 0
    for _ in range(args.reps):
        t0, c0 = time.perf_counter(), time.thread_time()
        encoded = [tok.encode(a, b, args.max_length)["input_ids"] for a, b in items]
        cpu_seconds.append(time.thread_time() - c0)
        seconds.append(time.perf_counter() - t0)
        tokens = sum(len(ids) for ids in encoded)
        digest = 14695981039346656037
        for ids in encoded:
            digest = fnv1a(ids, digest)
            digest = fnv1a([0xFFFFFFFF], digest)
    nbytes = sum(len(a.encode("utf-8")) + (len(b.encode("utf-8")) if b is not None else 0) for a, b in items)
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "texts": len(items), "bytes": nbytes,
                      "tokens": tokens, "digest": "%016x" % digest, "python": sys.version.split()[0],
                      "unicode": unicodedata.unidata_version}))


if __name__ == "__main__":
    main()

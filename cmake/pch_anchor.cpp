// pch_anchor: the translation unit that owns the shared LibTorch precompiled header.

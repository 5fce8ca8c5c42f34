"""Bounded decoding, shared by every stage that decodes bytes a stranger sent.

One decoder under one set of caps (pipeline.limits.Limits): decompression stopped at an
expanded size, a ratio and a deadline (compressed.py), JSON looked over for its nesting,
strings and numbers before a parser sees it (look.py). `pipeline fetch` verifies a download
with it and the reader reads the stored file with it, so a file passes or fails the same
caps in both. Part of the foundation: imports only errors and limits.
"""

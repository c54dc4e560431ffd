#!/usr/bin/env python3
"""Builds data/uci/{housevotes84,breastcancer,pima2}.csv.gz, three public data sets whose records
come with missing cells, from the R package mlbench 2.1-3 as Debian ships it (r-cran-mlbench).

    apt-get download r-cran-mlbench                     # r-cran-mlbench_2.1-3-1_amd64.deb
    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install rdata==1.1.0
    /tmp/venv/bin/python data/scripts/make_mlbench.py r-cran-mlbench_2.1-3-1_amd64.deb data/uci

The package is checked by its SHA-256, unpacked with `dpkg-deb -x` into a temporary directory
and its three `.rda` files read with the `rdata` package (pure Python). The missing cells (R's
NA) are written as empty cells, as shipped: nothing is imputed or dropped.

- HouseVotes84 (UCI Congressional Voting Records, 1984): 435 x 16 votes, `y` -> 1, `n` -> 0;
  label `democrat` / `republican`.
- BreastCancer (UCI Breast Cancer Wisconsin (Original)): 699 x 9 cytological scores 1-10 (the
  factor levels read as the integers they name); the sample code number `Id` is left out (an
  identifier, not a measurement); label `benign` / `malignant`.
- PimaIndiansDiabetes2 (Pima Indians Diabetes, with the impossible zeros of the original
  recoded as missing by mlbench): 768 x 8 measurements; label `neg` / `pos`.

CSV: a header, the `label` column first, then the features in mlbench's order and names;
numbers as R stores them (`repr` of the float, integral values without a fraction). gzip is
written with no file name and mtime 0, so the same package gives the same bytes on any machine
with the same zlib; the script prints each file's shape, its missing cells and the SHA-256 of
the decompressed CSV.
"""

import gzip
import hashlib
import io
import math
import os
import subprocess
import sys
import tempfile
import warnings

DEB_SHA256 = "2f1127f7b5e7d08703b13b52ef1976a0c355a7660d6ac575e29b87b13921bc06"
DATA_DIR = "usr/lib/R/site-library/mlbench/data"

# (R object, output name, label column, columns left out)
SETS = [
    ("HouseVotes84", "housevotes84", "Class", []),
    ("BreastCancer", "breastcancer", "Class", ["Id"]),
    ("PimaIndiansDiabetes2", "pima2", "diabetes", []),
]


def cell(value):
    """One feature cell: empty for R's NA, else the number."""
    if value is None:
        return ""
    if isinstance(value, str):
        if value == "y":
            return "1"
        if value == "n":
            return "0"
        return str(int(value))  # a factor level naming an integer (BreastCancer's 1-10)
    x = float(value)
    if math.isnan(x):
        return ""
    return str(int(x)) if x.is_integer() else repr(x)


def is_na(value):
    return value is None or (isinstance(value, float) and math.isnan(value))


def convert(frame, label, drop):
    features = [c for c in frame.columns if c != label and c not in drop]
    out = io.StringIO()
    out.write(",".join(["label"] + [str(c) for c in features]) + "\n")
    missing = 0
    for _, row in frame.iterrows():
        y = row[label]
        if is_na(y):
            raise SystemExit(f"a record without a label: {row}")
        cells = []
        for c in features:
            v = row[c]
            v = None if is_na(v) else v
            missing += v is None
            cells.append(cell(v))
        out.write(",".join([str(y)] + cells) + "\n")
    return out.getvalue(), len(features), missing


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    deb, out_dir = sys.argv[1], sys.argv[2]
    digest = hashlib.sha256(open(deb, "rb").read()).hexdigest()
    if digest != DEB_SHA256:
        raise SystemExit(f"{deb}: SHA-256 {digest}, expected {DEB_SHA256}")
    import rdata  # pip install rdata==1.1.0

    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["dpkg-deb", "-x", deb, tmp], check=True)
        for robj, name, label, drop in SETS:
            path = os.path.join(tmp, DATA_DIR, robj + ".rda")
            with warnings.catch_warnings():
                # the .rda files declare no string encoding; every string in them is ASCII
                warnings.simplefilter("ignore")
                frame = rdata.conversion.convert(rdata.parser.parse_file(path))[robj]
            text, n, missing = convert(frame, label, drop)
            body = text.encode("ascii")
            target = os.path.join(out_dir, name + ".csv.gz")
            with open(target, "wb") as f:
                with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as g:
                    g.write(body)
            rows = text.count("\n") - 1
            # an empty cell: two commas in a row, or a comma at the end of the line
            incomplete = sum(1 for line in text.splitlines()[1:] if ",," in line + ",")
            print(
                f"{target}: {rows} x {n}, {missing} missing cells in {incomplete} records, "
                f"csv sha256 {hashlib.sha256(body).hexdigest()}"
            )


if __name__ == "__main__":
    main()

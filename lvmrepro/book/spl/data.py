"""What ``notebooks/spl/00_data`` shows: the registered files of the self-paced learning chapter's data sets, and the
mammals splits' sizes -- read through the data registry."""
from __future__ import annotations

#: the chapter's data folders in the registry, and what each holds
FOLDERS = {"mnist/": "MNIST digits (Figure 3)", "mammals/": "mammals images and splits (Table 2, Figure 4)",
           "uniprobe/": "UniPROBE motif data (Table 1, Figure 2)",
           "litbank-coref/": "LitBank coreference, the stand-in for MUC-6 (Figure 1)"}


def registry_table() -> dict:
    """Per data folder: what it holds and how many files the registry names in it."""
    from lvmrepro import datasets
    reg = datasets.default_registry()
    rows = [{"folder": folder, "holds": what, "registered files": len(reg.names(folder))}
            for folder, what in FOLDERS.items()]
    return {"rows": rows, "caption": "The chapter's registered data files (each verified by its sha256 when fetched)"}


def mammals_splits_table() -> dict:
    """Per mammals split file: the number of rows its first line declares."""
    from lvmrepro import datasets
    reg = datasets.default_registry()
    rows = [{"split file": name, "rows": int(datasets.fetch(name).read_text().splitlines()[0].strip())}
            for name in reg.names("mammals/train_")]
    return {"rows": rows, "caption": "The mammals training splits: rows declared by each file"}

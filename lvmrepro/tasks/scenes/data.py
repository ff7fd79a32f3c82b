"""The 15-Scene images (Lazebnik, Schmid & Ponce 2006), the stand-in for MIT-Indoor-67 in G-MM Table 3.

The shared copy (``SOURCES-part3.md`` section 3) holds, per class, the 100 training images of the
standard protocol and the first 100 test images by file name: 1,500 + 1,500 8-bit greyscale JPEGs,
203-411 px wide and 200-411 px high.  Every image is a registered data file
``scene15/<split>/<Class>/image_NNNN.jpg`` and is read through :func:`lvmrepro.datasets.fetch`
(sha256 checked), never from a hard-coded path.

Labels are the class index in :data:`CLASSES` (folder names in alphabetical order).  Images are
listed in a fixed order: class, then file name; so ``load_split("train")[k]`` is the same image on
every machine.

One quirk of the data, kept as shipped: four test images of ``LivingRoom`` are byte-identical to
training images (and two training images of that class to each other); :func:`train_test_duplicates`
lists them.  The standard split has them too; nothing here drops them silently.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from lvmrepro.datasets.registry import default_registry, fetch

CLASSES = ("Bedroom", "Coast", "Forest", "Highway", "Industrial", "InsideCity", "Kitchen", "LivingRoom",
           "Mountain", "Office", "OpenCountry", "Store", "Street", "Suburb", "TallBuilding")
#: the five indoor classes (the paper's MIT-Indoor-67 is all indoor)
INDOOR = ("Bedroom", "Kitchen", "LivingRoom", "Office", "Store")
SPLITS = ("train", "test")
PER_CLASS = 100


class ImageDecodeError(ValueError):
    """An image could not be decoded; the message names the image."""


@dataclass(frozen=True)
class SceneImage:
    """One image: its registry name, class label (index into :data:`CLASSES`), split and sha256."""
    name: str
    label: int
    split: str
    sha256: str

    @property
    def class_name(self) -> str:
        return CLASSES[self.label]


def check_split(split) -> str:
    if split not in SPLITS:
        raise ValueError(f"15-Scene split must be one of {SPLITS}; got {split!r}")
    return split


def list_images(split: str, classes=None) -> list[SceneImage]:
    """Registered images of ``split`` ('train' or 'test'), ordered by class then file name.

    ``classes`` optionally restricts to some class names (labels stay the indices in :data:`CLASSES`).
    Raises ``ValueError`` if the registry does not hold exactly 100 images per class.
    """
    split = check_split(split)
    wanted = CLASSES if classes is None else tuple(classes)
    unknown = [c for c in wanted if c not in CLASSES]
    if unknown:
        raise ValueError(f"unknown 15-Scene class(es) {unknown}; the classes are {CLASSES}")
    reg = default_registry()
    out = []
    for label, cls in enumerate(CLASSES):
        if cls not in wanted:
            continue
        names = reg.names(f"scene15/{split}/{cls}/")
        if len(names) != PER_CLASS:
            raise ValueError(f"the registry holds {len(names)} {split} images of class {cls}; expected {PER_CLASS}")
        out.extend(SceneImage(n, label, split, reg.entry(n).sha256) for n in names)
    return out


def labels_of(images) -> np.ndarray:
    """Class labels (int64) of a list of :class:`SceneImage`."""
    return np.array([im.label for im in images], dtype=np.int64)


def decode_greyscale(path, name: str | None = None) -> np.ndarray:
    """The image at ``path`` as a uint8 (H, W) greyscale array; ``ImageDecodeError`` names it if unreadable."""
    from PIL import Image, UnidentifiedImageError
    label = name or str(path)
    try:
        with Image.open(path) as im:
            im.load()
            grey = im.convert("L")
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise ImageDecodeError(f"image {label} ({path}) could not be decoded: {type(exc).__name__}: {exc}") from None
    arr = np.asarray(grey, dtype=np.uint8)
    if arr.ndim != 2 or min(arr.shape) < 1:
        raise ImageDecodeError(f"image {label} ({path}) decoded to an empty array of shape {arr.shape}")
    return arr


def load_image(image: SceneImage) -> np.ndarray:
    """The (checksummed) image as uint8 (H, W)."""
    return decode_greyscale(fetch(image.name), image.name)


def train_test_duplicates() -> list[tuple[str, str]]:
    """Pairs (test image, training image) whose files are byte-identical (same sha256)."""
    by_sha = {}
    for im in list_images("train"):
        by_sha.setdefault(im.sha256, im.name)
    return [(im.name, by_sha[im.sha256]) for im in list_images("test") if im.sha256 in by_sha]


def region_features(images, **kw) -> np.ndarray:
    """CNN region features (float32 (n, 100, 1280)) of :class:`SceneImage` s, cached by image sha256
    (see :func:`lvmrepro.tasks.scenes.cnn.region_features` for the network and the keyword arguments)."""
    from lvmrepro.tasks.scenes import cnn
    return cnn.region_features([im.name for im in images], decode=decode_greyscale, **kw)

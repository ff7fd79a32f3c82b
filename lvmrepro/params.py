"""Typed target parameters: every override (``lvmrepro run -p NAME VALUE``, ``run(name, **overrides)``,
``lvmrepro rerun -p``) is parsed and checked against its declaration before any work starts.

A target declares its parameters' types in ``@target(..., params={...})``; a parameter it does not
declare gets a type inferred from its values at the three scales (:func:`infer`): integers, floats,
booleans, strings, ``None``-able values, lists of numbers, lists of strings (whose allowed words are every
word some scale uses).  Values may be written as JSON (``3``, ``0.5``, ``true``, ``null``, ``["D31", "Cloud"]``)
or as plain words (``3``, ``0.5``, ``true``, ``none``, ``D31,Cloud``).  A bad value gives a one-line
:class:`ValueError` naming the parameter, the value and what is allowed.

Every declaration has a range: a number without a stated upper bound gets :data:`COUNT_LIMIT` (integers) or
:data:`FLOAT_LIMIT` (floats; also the lower bound of a float without one), so no parameter can ask for an
unbounded loop or allocation; lists have at most ``max_len`` items and no repeated item (a repeated data set,
split or fold would count the same runs twice as independent samples), unless declared ``unique=False``.
Bounds that depend on a data set's size are stated in the declaration (the registered data are fixed) or
checked by the target's ``check_params`` before any work.  :func:`check_count` and :func:`check_allocation`
are the same limits for the public functions: a size is checked before the array it sizes is allocated.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

#: the largest integer a parameter may take unless its declaration states another bound (a count: trials,
#: iterations, sizes; larger values would only mean runs that never finish or allocations that fail)
COUNT_LIMIT = 1_000_000
#: the largest magnitude of a float parameter unless its declaration states another bound (products and squares
#: of a few such numbers stay finite in float64)
FLOAT_LIMIT = 1e12
#: seeds: non-negative integers below 2**63 (numpy's SeedSequence takes them; the same bound as ``--seed``)
SEED_LIMIT = 2 ** 63 - 1
#: the longest list parameter unless its declaration states another length
LIST_LIMIT = 1000
#: the most bytes one array sized by a parameter or an argument may take (checked before it is allocated)
ARRAY_BYTES_LIMIT = 4 * 2 ** 30


@dataclass(frozen=True)
class Param:
    """One parameter's type.  ``kind``: int, float, bool, str, choice or list; ``optional``: ``None`` is
    allowed; ``lo``/``hi`` (inclusive unless ``lo_open``/``hi_open``) bound numbers (and list items);
    ``choices`` the allowed words (choice, or list items); ``item``: the item kind of a list;
    ``min_len``/``max_len``: the shortest and longest list; ``unique``: a list may not repeat an item;
    ``help``: what it means.  Numbers without a stated bound get :data:`COUNT_LIMIT` / :data:`FLOAT_LIMIT`."""
    kind: str
    optional: bool = False
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple = ()
    item: str | None = None
    min_len: int = 0
    help: str = ""
    extra: dict = field(default_factory=dict, compare=False)
    max_len: int = LIST_LIMIT
    unique: bool = True

    def __post_init__(self):
        # every number has a range: a declaration that states no bound gets the default limits
        numeric = self.item if self.kind == "list" else self.kind
        if numeric == "int" and self.hi is None:
            object.__setattr__(self, "hi", COUNT_LIMIT)
        if numeric == "float":
            if self.hi is None:
                object.__setattr__(self, "hi", FLOAT_LIMIT)
            if self.lo is None:
                object.__setattr__(self, "lo", -FLOAT_LIMIT)

    # ----------------------------------------------------------------- describing
    def describe(self) -> str:
        if self.extra.get("opaque"):
            return "a structured value (not settable)"
        if self.kind == "list":
            if self.choices:
                inner = "words, each one of " + ", ".join(map(str, self.choices))
            else:
                inner = {"int": "integers", "float": "finite numbers", "bool": "booleans"}.get(self.item or "str", "words")
                inner += self._bounds_text()
            sizes = ([f"at least {self.min_len}"] if self.min_len else []) + [f"at most {self.max_len}"]
            what = f"a list of {'distinct ' if self.unique else ''}{inner} ({', '.join(sizes)} items)"
        elif self.kind == "choice" or (self.kind == "str" and self.choices):
            what = "one of " + ", ".join(map(str, self.choices))
        else:
            what = {"int": "an integer", "float": "a finite number", "bool": "true or false", "str": "a word"}[self.kind]
            what += self._bounds_text()
        return what + (" or none" if self.optional else "")

    def _bounds_text(self) -> str:
        bounds = []
        if self.lo is not None:
            bounds.append(f"{'>' if self.lo_open else '>='} {_number(self.lo)}")
        if self.hi is not None:
            bounds.append(f"{'<' if self.hi_open else '<='} {_number(self.hi)}")
        return (" " + " and ".join(bounds)) if bounds else ""

    # ----------------------------------------------------------------- checking a Python value
    def _fail(self, name, value, why=""):
        shown = json.dumps(value) if isinstance(value, (str, int, float, bool, list, type(None))) else repr(value)
        if len(shown) > 80:
            shown = shown[:60] + "..." + shown[-10:]
        raise ValueError(f"parameter {name!r}: {shown} is not allowed{(' (' + why + ')') if why else ''}; "
                         f"expected {self.describe()}" + (f" ({self.help})" if self.help else ""))

    def _scalar(self, name, value, kind):
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and math.isfinite(value) and value.is_integer():
                    self._bounds(name, value)     # before int(): the message shows the value as written
                    value = int(value)
                else:
                    self._fail(name, value)
            self._bounds(name, value)
            return int(value)
        if kind == "float":
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                self._fail(name, value)
            try:
                value = float(value)
            except OverflowError:
                self._fail(name, value, "too large")
            if not math.isfinite(value):
                self._fail(name, value, "not finite")
            self._bounds(name, value)
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                self._fail(name, value)
            return value
        if not isinstance(value, str):
            self._fail(name, value)
        if self.choices and value not in self.choices:
            self._fail(name, value)
        return value

    def _bounds(self, name, value):
        if self.lo is not None and (value < self.lo or (self.lo_open and value == self.lo)):
            self._fail(name, value)
        if self.hi is not None and (value > self.hi or (self.hi_open and value == self.hi)):
            self._fail(name, value)

    def check(self, name: str, value):
        """``value`` (a Python object) as this parameter's type, or ValueError."""
        if self.extra.get("opaque"):
            check_opaque(self, name, value)
        if value is None:
            if self.optional:
                return None
            self._fail(name, value)
        if self.kind == "list":
            if not isinstance(value, (list, tuple)):
                self._fail(name, value)
            if len(value) < self.min_len:
                self._fail(name, list(value), f"needs at least {self.min_len} item(s)")
            if len(value) > self.max_len:
                self._fail(name, list(value), f"{len(value)} items; at most {self.max_len}")
            items = [self._scalar(name, v, self.item or "str") for v in value]
            if self.unique:
                seen = set()
                for v in items:
                    if v in seen:
                        self._fail(name, list(value), f"{json.dumps(v)} is given twice: a repeated entry would count "
                                                      "the same runs again as new samples")
                    seen.add(v)
            return items
        return self._scalar(name, value, "str" if self.kind == "choice" else self.kind)

    # ----------------------------------------------------------------- parsing a command-line word
    def parse(self, name: str, text: str):
        """A command-line value: JSON, or a plain word (lists: comma-separated words)."""
        if self.extra.get("opaque"):
            check_opaque(self, name, text)
        if not isinstance(text, str):
            return self.check(name, text)
        raw = text.strip()
        if self.optional and raw.lower() in ("none", "null"):
            return None
        try:
            value = json.loads(raw)
        except (json.JSONDecodeError, ValueError):
            value = _UNPARSED
        kind = self.kind
        if kind == "list":
            if value is _UNPARSED or not isinstance(value, list):
                words = [w.strip() for w in raw.split(",") if w.strip()]
                value = [self._word(name, w, self.item or "str", raw) for w in words]
            return self.check(name, value)
        if value is _UNPARSED or (kind in ("str", "choice") and not isinstance(value, str)):
            value = self._word(name, raw, "str" if kind == "choice" else kind, raw)
        return self.check(name, value)

    def _word(self, name, word, kind, raw):
        if kind == "int":
            try:
                return int(word)
            except ValueError:
                self._fail(name, raw)
        if kind == "float":
            try:
                v = float(word)
            except (ValueError, OverflowError):
                self._fail(name, raw)
            return v
        if kind == "bool":
            low = word.lower()
            if low in ("true", "yes", "on"):
                return True
            if low in ("false", "no", "off"):
                return False
            self._fail(name, raw)
        return word


_UNPARSED = object()


def Int(lo=None, hi=None, *, optional=False, help=""):
    """An integer in [lo, hi] (``hi``: :data:`COUNT_LIMIT` unless stated)."""
    return Param("int", optional=optional, lo=lo, hi=hi, help=help)


def Seed(*, help="a seed"):
    """A seed: an integer in [0, :data:`SEED_LIMIT`]."""
    return Param("int", lo=0, hi=SEED_LIMIT, help=help)


def Float(lo=None, hi=None, *, lo_open=False, hi_open=False, optional=False, help=""):
    """A finite float in [lo, hi] (open ends with ``lo_open``/``hi_open``; unstated bounds are
    -/+ :data:`FLOAT_LIMIT`)."""
    return Param("float", optional=optional, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open, help=help)


def Bool(help=""):
    return Param("bool", help=help)


def Choice(*choices, optional=False, help=""):
    return Param("choice", optional=optional, choices=tuple(choices), help=help)


def List(item="str", *, choices=(), lo=None, hi=None, lo_open=False, hi_open=False, min_len=1,
         max_len=LIST_LIMIT, unique=True, help=""):
    """A list of ``item`` (str, int or float) with no repeated item unless ``unique=False``."""
    return Param("list", item=item, choices=tuple(choices), lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open,
                 min_len=min_len, max_len=max_len, unique=unique, help=help)


def infer(values) -> Param:
    """A parameter type from its values at the three scales (see the module docstring).

    Integers that are positive at every scale must stay >= 1 (counts: trials, iterations, sizes);
    other integers >= 0; floats positive at every scale stay > 0; lists of words may use any word some
    scale uses; lists keep at least one item.
    """
    values = list(values)
    optional = any(v is None for v in values)
    present = [v for v in values if v is not None]
    if not present:
        return Param("str", optional=True)
    if all(isinstance(v, bool) for v in present):
        return Param("bool", optional=optional)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return Param("int", optional=optional, lo=1 if all(v >= 1 for v in present) else 0)
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        positive = all(v > 0 for v in present)
        return Param("float", optional=optional, lo=0.0 if positive else None, lo_open=positive)
    if all(isinstance(v, str) for v in present):
        return Param("str", optional=optional)
    if all(isinstance(v, (list, tuple)) for v in present):
        items = [x for v in present for x in v]
        min_len = 1 if all(len(v) for v in present) else 0
        if items and all(isinstance(x, str) for x in items):
            return Param("list", optional=optional, item="str", choices=tuple(sorted(set(items))), min_len=min_len)
        if items and all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            return Param("list", optional=optional, item="int", lo=min(0, min(items)), min_len=min_len)
        if items and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items):
            return Param("list", optional=optional, item="float", min_len=min_len)
        return Param("list", optional=optional, item="json", min_len=0, extra={"opaque": True})
    return Param("json", optional=optional, extra={"opaque": True})


def check_opaque(param: Param, name: str, value):
    """Parameters whose values are structured (dicts, mixed lists) cannot be set from the command line."""
    raise ValueError(f"parameter {name!r} holds structured values and cannot be overridden; "
                     f"copy the target into your own code to change it")


def _number(x) -> str:
    """A bound as a reader writes it: 245, 1000000, 0.01, 1e+12, 2**63-1."""
    if x == SEED_LIMIT:
        return "2**63-1"
    if (isinstance(x, int) and abs(x) < 10 ** 15) or (float(x).is_integer() and abs(x) <= COUNT_LIMIT):
        return str(int(x))
    return f"{x:g}"


# --------------------------------------------------------------------------- the same limits for functions
def check_count(value, name: str, *, lo: int = 0, hi: int = COUNT_LIMIT) -> int:
    """``value`` as an int in [lo, hi] (integral floats accepted), or a one-line ValueError naming ``name``."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    try:
        import numpy as np
        if isinstance(value, np.integer):
            value = int(value)
    except ImportError:   # pragma: no cover - numpy is a dependency
        pass
    if not isinstance(value, int):
        raise ValueError(f"{name} must be an integer; got {value!r:.60}")
    if not lo <= value <= hi:
        raise ValueError(f"{name} must be an integer in [{_number(lo)}, {_number(hi)}]; got {value}")
    return value


def check_allocation(what: str, n_items, itemsize: int = 8, *, limit: int = ARRAY_BYTES_LIMIT) -> int:
    """Refuse, before allocating, an array of ``n_items`` items of ``itemsize`` bytes above ``limit`` bytes
    (``n_items``: a number or a shape).  Returns the number of items."""
    if isinstance(n_items, (tuple, list)):
        total = 1
        for s in n_items:
            total *= int(s)
    else:
        total = int(n_items)
    if total < 0:
        raise ValueError(f"{what}: a negative size ({total})")
    if total * int(itemsize) > limit:
        raise ValueError(f"{what} would need {total * int(itemsize) / 2 ** 30:.3g} GiB, above the limit of "
                         f"{limit / 2 ** 30:.3g} GiB for one array; use smaller sizes")
    return total

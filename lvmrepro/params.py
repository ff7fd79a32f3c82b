"""Typed target parameters: every override (``lvmrepro run -p NAME VALUE``, ``run(name, **overrides)``,
``lvmrepro rerun -p``) is parsed and checked against its declaration before any work starts.

A target declares its parameters' types in ``@target(..., params={...})``; a parameter it does not
declare gets a type inferred from its values at the three scales (:func:`infer`): integers, floats,
booleans, strings, ``None``-able values, lists of numbers, lists of strings (whose allowed words are every
word some scale uses).  Values may be written as JSON (``3``, ``0.5``, ``true``, ``null``, ``["D31", "Cloud"]``)
or as plain words (``3``, ``0.5``, ``true``, ``none``, ``D31,Cloud``).  A bad value gives a one-line
:class:`ValueError` naming the parameter, the value and what is allowed.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Param:
    """One parameter's type.  ``kind``: int, float, bool, str, choice or list; ``optional``: ``None`` is
    allowed; ``lo``/``hi`` (inclusive unless ``lo_open``/``hi_open``) bound numbers (and list items);
    ``choices`` the allowed words (choice, or list items); ``item``: the item kind of a list;
    ``min_len``: the shortest list; ``help``: what it means."""
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

    # ----------------------------------------------------------------- describing
    def describe(self) -> str:
        if self.extra.get("opaque"):
            return "a structured value (not settable)"
        if self.kind == "list":
            inner = Param(self.item or "str", lo=self.lo, hi=self.hi, lo_open=self.lo_open, hi_open=self.hi_open,
                          choices=self.choices).describe()
            what = f"a list of {inner}" + (f" (at least {self.min_len})" if self.min_len else "")
        elif self.kind == "choice" or (self.kind == "str" and self.choices):
            what = "one of " + ", ".join(map(str, self.choices))
        else:
            what = {"int": "an integer", "float": "a finite number", "bool": "true or false", "str": "a word"}[self.kind]
            bounds = []
            if self.lo is not None:
                bounds.append(f"{'>' if self.lo_open else '>='} {self.lo:g}")
            if self.hi is not None:
                bounds.append(f"{'<' if self.hi_open else '<='} {self.hi:g}")
            if bounds:
                what += " " + " and ".join(bounds)
        return what + (" or none" if self.optional else "")

    # ----------------------------------------------------------------- checking a Python value
    def _fail(self, name, value, why=""):
        shown = json.dumps(value) if isinstance(value, (str, int, float, bool, list, type(None))) else repr(value)
        raise ValueError(f"parameter {name!r}: {shown} is not allowed{(' (' + why + ')') if why else ''}; "
                         f"expected {self.describe()}")

    def _scalar(self, name, value, kind):
        if kind == "int":
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer() and math.isfinite(value):
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
            return [self._scalar(name, v, self.item or "str") for v in value]
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
    return Param("int", optional=optional, lo=lo, hi=hi, help=help)


def Float(lo=None, hi=None, *, lo_open=False, hi_open=False, optional=False, help=""):
    return Param("float", optional=optional, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open, help=help)


def Bool(help=""):
    return Param("bool", help=help)


def Choice(*choices, optional=False, help=""):
    return Param("choice", optional=optional, choices=tuple(choices), help=help)


def List(item="str", *, choices=(), lo=None, hi=None, min_len=1, help=""):
    return Param("list", item=item, choices=tuple(choices), lo=lo, hi=hi, min_len=min_len, help=help)


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

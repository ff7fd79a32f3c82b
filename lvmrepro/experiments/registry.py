"""The registry of targets: one function per table or figure, registered with :func:`target` and run by name
at a named scale (:data:`SCALES`), with its parameters declared and checked (:mod:`lvmrepro.params`)."""
from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from lvmrepro.params import Param, infer

SCALES = ("smoke", "default", "paper")
#: the optional scale beyond the papers' sample sizes: the paper's protocol with more units (sequences, seeds,
#: splits, C values) where the data allow; a target that defines it decides there what the paper's n cannot
BEYOND = "beyond"
ALL_SCALES = SCALES + (BEYOND,)
_TARGETS: dict[str, "Target"] = {}
_LOADED = False


@dataclass
class Target:
    name: str
    func: Callable
    title: str
    scales: dict[str, dict]
    paper: Any = None
    notebook: str | None = None
    description: str = ""
    item: str | None = None
    requires: tuple = ()
    params: dict = field(default_factory=dict)
    check_params: Callable | None = None
    book: dict = field(default_factory=dict)
    #: the ``artifacts`` keys the target writes, each with what it holds (None: not declared yet)
    artifacts: dict | None = None

    @property
    def paper_id(self) -> str:
        return self.name.split(".", 1)[0]

    def param_spec(self, name: str) -> Param:
        return self.params[name]


def target(name: str, *, title: str, scales: dict[str, dict], paper: Any = None, notebook: str | None = None,
           description: str = "", item: str | None = None, requires=(), params: dict | None = None,
           check_params: Callable | None = None, book: dict | None = None, artifacts: dict | None = None):
    """Register ``func(ctx)`` as the experiment behind table/figure ``name``.

    ``item``: the paper item it reproduces (``"Table 1"``; see :mod:`lvmrepro.book.papers`; None for targets
    beyond the paper); ``requires``: the targets whose results it reads with :meth:`Context.require`;
    ``params``: parameter types (:mod:`lvmrepro.params`) -- undeclared ones are inferred from the scales;
    ``check_params(params)``: raises ValueError for combinations no single type can forbid;
    ``book``: per scale, the parameters the *book build* overrides (``{"paper": {"n_parts": 25}}``) where the
    full protocol does not fit the book's time budget -- applied by ``run(..., book=True)`` and
    ``lvmrepro run --book`` (what ``make book`` runs), never by a plain run; the notebook says so;
    ``artifacts``: every key of the result's ``artifacts`` the target writes, with a line saying what it holds
    (``{"trials": "every trial's objectives and iterations"}``; ``{}``: none) -- the result contract
    (:func:`lvmrepro.experiments.contract.validate_result`) refuses a result that writes a key not declared here
    or misses one declared (a key written only sometimes is written as null otherwise).
    """
    missing = [s for s in SCALES if s not in scales]
    if missing:
        raise ValueError(f"target {name!r} must define every scale; missing {missing}")
    unknown = [s for s in scales if s not in ALL_SCALES]
    if unknown:
        raise ValueError(f"target {name!r} defines unknown scales {unknown}; scales are {ALL_SCALES}")
    keys = set(scales["smoke"])
    if any(set(scales[s]) != keys for s in scales):
        raise ValueError(f"target {name!r}: every scale must set the same parameters")
    specs = {k: infer([scales[s][k] for s in scales]) for k in keys}
    for k, spec in (params or {}).items():
        if k not in keys:
            raise ValueError(f"target {name!r} declares a type for {k!r}, which no scale sets")
        specs[k] = spec
    for s in scales:   # the declared types must admit the target's own values
        for k, v in scales[s].items():
            specs[k].check(k, v) if not specs[k].extra.get("opaque") else None
    book = {s: dict(v) for s, v in (book or {}).items()}
    for s, overrides in book.items():
        if s not in scales:
            raise ValueError(f"target {name!r}: book parameters for unknown scale {s!r}")
        for k, v in overrides.items():
            if k not in keys:
                raise ValueError(f"target {name!r}: book parameter {k!r} is not a parameter of the target")
            specs[k].check(k, v)

    if artifacts is not None:
        if not isinstance(artifacts, dict) or not all(isinstance(k, str) and k and isinstance(v, str) and v.strip()
                                                      for k, v in artifacts.items()):
            raise ValueError(f"target {name!r}: artifacts must map each key it writes to a line saying what it holds")
        artifacts = dict(artifacts)

    def deco(func):
        if name in _TARGETS and _TARGETS[name].func.__module__ != func.__module__:
            raise ValueError(f"target {name!r} registered twice")
        _TARGETS[name] = Target(name, func, title, scales, paper, notebook, description or (func.__doc__ or "").strip(),
                                item, tuple(requires), specs, check_params, book, artifacts)
        return func
    return deco


def _load_all() -> None:
    global _LOADED
    if _LOADED:
        return
    # every module of the chapter packages (lvmrepro/experiments/<paper>/<topic>.py); "_" marks helpers
    for mod in pkgutil.walk_packages([str(Path(__file__).resolve().parent)], prefix="lvmrepro.experiments."):
        if not any(part.startswith("_") for part in mod.name.split(".")):
            importlib.import_module(mod.name)
    _LOADED = True


def targets() -> dict[str, Target]:
    """All registered targets, by name."""
    _load_all()
    return dict(sorted(_TARGETS.items()))


def get_target(name: str) -> Target:
    all_targets = targets()
    if not isinstance(name, str) or name not in all_targets:
        raise ValueError(f"unknown target {name!r}; valid targets are: {', '.join(all_targets)}")
    return all_targets[name]


def book_params(name: str, scale: str) -> dict:
    """The parameters the book build overrides for target ``name`` at ``scale`` (usually none; see
    :func:`target`)."""
    return dict(get_target(name).book.get(check_scale(scale), {}))


def check_scale(scale: str) -> str:
    if not isinstance(scale, str) or scale not in ALL_SCALES:
        raise ValueError(f"unknown scale {scale!r}; valid scales are: {', '.join(ALL_SCALES)}")
    return scale


def has_scale(tgt: Target, scale: str) -> bool:
    """Whether target ``tgt`` defines ``scale`` (every target defines the three book scales; few define
    :data:`BEYOND`)."""
    return check_scale(scale) in tgt.scales


def upstream_scale(tgt: Target, scale: str) -> str:
    """The scale at which an upstream target ``tgt`` is read by a run at ``scale``: the same, or the paper's when
    ``tgt`` has no beyond scale (a run beyond the paper reads its upstream at the paper's protocol)."""
    return scale if scale in tgt.scales else "paper"


def resolve_params(tgt: Target, scale: str, overrides: dict | None, *, from_text: bool = False) -> dict:
    """The scale's parameters with ``overrides`` applied, each checked against its type (``from_text``:
    the values are command-line words to parse)."""
    if scale not in tgt.scales:
        with_beyond = [n for n, t in _TARGETS.items() if BEYOND in t.scales]
        raise ValueError(f"target {tgt.name!r} has no {scale!r} scale (its paper scale already uses every unit the "
                         f"data offer, or more units would not decide more); targets with one: "
                         f"{', '.join(sorted(with_beyond)) or 'none'}")
    params = dict(tgt.scales[scale])
    for key, value in (overrides or {}).items():
        if key not in params:
            raise ValueError(f"target {tgt.name!r} has no parameter {key!r}; its parameters are "
                             f"{', '.join(sorted(params))}")
        spec = tgt.params[key]
        try:
            params[key] = spec.parse(key, value) if from_text else spec.check(key, value)
        except ValueError as exc:
            raise ValueError(f"{tgt.name}: {exc}") from None
    if tgt.check_params is not None and overrides:
        try:
            tgt.check_params(params)
        except ValueError as exc:
            raise ValueError(f"{tgt.name}: {exc}") from None
    return params

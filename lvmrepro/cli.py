"""Command line: ``lvmrepro list | run | rerun | fetch | store``.

Every anticipated error -- an unknown target or scale, a parameter value its type does not allow, an
output folder that cannot be written, a missing or corrupt data file -- is one line
``lvmrepro: error: ...`` and exit status 2, before any work.  A traceback means a bug (exit 1, with a
line asking to report it); an interrupted run exits with 130.
"""
from __future__ import annotations

import argparse
import re
import sys
import traceback
from pathlib import Path


def cmd_list(args) -> int:
    """Every target: its title; the function that computes it (module:function) and the notebook that shows it;
    with ``--artifacts``, the artifacts it declares."""
    from lvmrepro.experiments import targets
    for name, tgt in targets().items():
        notebook = f"{tgt.notebook}.md" if tgt.notebook else "no notebook"
        print(f"{name:28s} {tgt.title}")
        print(f"{'':28s}   {tgt.func.__module__}:{tgt.func.__name__} -> {notebook}")
        if getattr(args, "artifacts", False):
            declared = tgt.artifacts
            if declared is None:
                print(f"{'':28s}   artifacts: not declared")
            for key, meaning in (declared or {}).items():
                print(f"{'':28s}   artifacts[{key!r}]: {meaning}")
    return 0


def _run_targets(args):
    from lvmrepro.experiments import check_jobs, check_scale, check_seed, get_target, resolve_params, run, targets
    from lvmrepro.io import check_output_dir
    from lvmrepro.stats import verdict_of
    check_scale(args.scale)
    check_jobs(args.jobs)
    check_seed(args.seed)
    from lvmrepro.parallel import scheduler, use_scheduler
    if args.scheduler is not None or scheduler():     # checked and probed first: before any work
        use_scheduler(args.scheduler if args.scheduler is not None else scheduler())
    if args.target == "all":
        names = [n for n, t in targets().items() if not n.startswith("toy.") and args.scale in t.scales]
    else:
        names = [get_target(args.target).name]
    overrides = {}
    for key, value in args.param or []:
        if key in overrides:
            raise ValueError(f"parameter {key!r} is given twice")
        overrides[key] = value
    # every override is checked against every target it is given to, before the first one runs
    for name in names:
        tgt = get_target(name)
        given = {k: v for k, v in overrides.items() if k in tgt.scales[args.scale] or len(names) == 1}
        resolve_params(tgt, args.scale, given, from_text=True)
    if len(names) > 1:
        unknown = [k for k in overrides if not any(k in get_target(n).scales[args.scale] for n in names)]
        if unknown:
            raise ValueError(f"no target has a parameter {unknown[0]!r}")
    if args.out is not None:
        if not str(args.out).strip():
            raise ValueError("--out must name a folder; got an empty path (use --out . for the current folder)")
        args.out = Path(args.out)
        check_output_dir(args.out)
    for name in names:
        given = {k: v for k, v in overrides.items() if k in get_target(name).scales[args.scale]}
        result = run(name, args.scale, out=args.out, jobs=args.jobs, seed=args.seed, force=args.force,
                     book=args.book, _from_text=True, **given)
        summary = ", ".join(f"{c['id']}: {verdict_of(c)}" for c in result["claims"])
        print(f"{name} [{args.scale}] {result['runtime_s']:.1f}s  {summary}")
    return 0


def cmd_run(args) -> int:
    return _run_targets(args)


def cmd_rerun(args) -> int:
    from lvmrepro.book.rerun import rerun_notebook
    params = {}
    for key, value in args.param or []:
        if key in params:
            raise ValueError(f"parameter {key!r} is given twice")
        params[key] = value
    out = rerun_notebook(args.notebook, params, output=args.output, from_text=True)
    print(f"executed notebook written to {out}")
    return 0


def cmd_fetch(args) -> int:
    from lvmrepro.datasets import default_registry, fetch
    names = default_registry().names(args.prefix)
    if not names:
        raise ValueError(f"no registered data file starts with {args.prefix!r}")
    for name in names:
        fetch(name)
    print(f"{len(names)} file(s) present and verified")
    return 0


def cmd_store(args) -> int:
    from lvmrepro.book import stored
    dest = stored.store(args.result, overwrite=args.overwrite)
    print(f"stored as {dest}")
    return 0


#: a command-line word that is a negative number (``-1e-3``, ``-.5``, ``-inf``): a value, not an option
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$|^-(inf|infinity|nan)$", re.IGNORECASE)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``lvmrepro: error: ...``, exit 2) and negative numbers as values
    (``-p w0 -1e-3``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def error(self, message):
        self.exit(2, f"lvmrepro: error: {self.prog.split()[-1] if ' ' in self.prog else ''}"
                     f"{': ' if ' ' in self.prog else ''}{message.splitlines()[0] if message else 'bad arguments'} "
                     f"(see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="lvmrepro", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    ls = sub.add_parser("list", help="list the tables and figures that can be run: each target's title, the "
                                     "module:function that computes it and the notebook that shows it")
    ls.add_argument("--artifacts", action="store_true", help="also the artifacts each target declares")
    ls.set_defaults(func=cmd_list)

    r = sub.add_parser("run", help="run a table or figure (or 'all') and write DIR/TARGET.json")
    r.add_argument("target")
    r.add_argument("--scale", default="default",
                   help="smoke, default, paper, or beyond (the paper's protocol with more units, where a target has it)")
    r.add_argument("--out", default=None, help="result directory (default results/SCALE)")
    r.add_argument("--jobs", type=int, default=1, help="parallel trials (-1: all cores)")
    r.add_argument("--seed", type=int, default=0, help="base seed (a non-negative integer)")
    r.add_argument("--force", action="store_true", help="recompute even if a cached result matches")
    r.add_argument("--book", action="store_true",
                   help="the book build's parameters: targets whose full protocol does not fit the book's time "
                        "budget at this scale run their documented reduction (what make book runs)")
    r.add_argument("--scheduler", default=None,
                   help="a Dask scheduler (tcp://HOST:8786) to run the independent trials on; "
                        "default $LVMREPRO_SCHEDULER, else local processes")
    r.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="override one of the scale's parameters (JSON or plain words; lists: a,b,c)")
    r.set_defaults(func=cmd_run)

    rr = sub.add_parser("rerun", help="execute a chapter notebook with other parameters (papermill)")
    rr.add_argument("notebook", help="a notebooks/<paper>/*.md file")
    rr.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    rr.add_argument("--output", type=Path, default=None)
    rr.set_defaults(func=cmd_rerun)

    f = sub.add_parser("fetch", help="locate and verify registered data files (by name prefix)")
    f.add_argument("prefix", nargs="?", default="")
    f.set_defaults(func=cmd_fetch)

    s = sub.add_parser("store", help="keep a result whose run is too long for the book build (the paper's full "
                                     "protocol of a reduced target) in the package, to be shown beside the build's run")
    s.add_argument("result", type=Path, help="a result file of a plain run at a scale's own parameters")
    s.add_argument("--overwrite", action="store_true", help="replace a stored result of the same target and scale")
    s.set_defaults(func=cmd_store)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, OSError) as exc:   # user errors, missing/corrupt data, unwritable places
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"lvmrepro: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lvmrepro: interrupted", file=sys.stderr)
        return 130
    except Exception:  # noqa: BLE001 - a bug: show it, and ask for a report
        traceback.print_exc()
        print("lvmrepro: this is a bug in lvmrepro; please report it with the command line above",
              file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

"""Command line: ``lvmrepro list | run | rerun | fetch``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _value(text: str):
    """Parse a -p value the way papermill does: int, float, bool, None, else string."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return {"true": True, "false": False, "none": None}.get(text.lower(), text)


def cmd_list(args) -> int:
    from lvmrepro.experiments import targets
    for name, tgt in targets().items():
        print(f"{name:28s} {tgt.title}")
    return 0


def cmd_run(args) -> int:
    from lvmrepro.experiments import check_scale, get_target, run, targets
    check_scale(args.scale)
    names = list(targets()) if args.target == "all" else [args.target]
    if args.target == "all":
        names = [n for n in names if not n.startswith("toy.")]
    else:
        get_target(args.target)
    overrides = {k: _value(v) for k, v in (args.param or [])}
    for name in names:
        result = run(name, args.scale, out=args.out, jobs=args.jobs, seed=args.seed, force=args.force,
                     **overrides)
        verdicts = {True: "holds", False: "FAILS", None: "undecided"}
        summary = ", ".join(f"{c['id']}: {verdicts[c['holds']]}" for c in result["claims"])
        print(f"{name} [{args.scale}] {result['runtime_s']:.1f}s  {summary}")
    return 0


def cmd_rerun(args) -> int:
    from lvmrepro.rerun import rerun_notebook
    params = {k: _value(v) for k, v in (args.param or [])}
    out = rerun_notebook(args.notebook, params, output=args.output)
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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="lvmrepro", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="list the tables and figures that can be run").set_defaults(func=cmd_list)

    r = sub.add_parser("run", help="run a table or figure (or 'all') and write DIR/TARGET.json")
    r.add_argument("target")
    r.add_argument("--scale", default="default", help="smoke, default or paper")
    r.add_argument("--out", type=Path, default=None, help="result directory (default results/SCALE)")
    r.add_argument("--jobs", type=int, default=1, help="parallel trials (-1: all cores)")
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--force", action="store_true", help="recompute even if a cached result matches")
    r.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"),
                   help="override one of the scale's parameters")
    r.set_defaults(func=cmd_run)

    rr = sub.add_parser("rerun", help="execute a chapter notebook with other parameters (papermill)")
    rr.add_argument("notebook", help="a notebooks/<paper>/*.md file")
    rr.add_argument("-p", "--param", nargs=2, action="append", metavar=("NAME", "VALUE"))
    rr.add_argument("--output", type=Path, default=None)
    rr.set_defaults(func=cmd_rerun)

    f = sub.add_parser("fetch", help="locate and verify registered data files (by name prefix)")
    f.add_argument("prefix", nargs="?", default="")
    f.set_defaults(func=cmd_fetch)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, FileNotFoundError) as exc:
        print(f"lvmrepro: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

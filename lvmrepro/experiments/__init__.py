"""Experiments: one function per table or figure, run by name at a named scale.

The package is four modules and one folder per paper:

* :mod:`.registry` -- :func:`target` registers a function with its scales and parameter types;
* :mod:`.context` -- :class:`Context` (what the function gets) and :func:`run` (run or serve, write the file);
* :mod:`.cache` -- the result cache (keys over everything a result depends on) and :class:`RunCache`, the one
  memo of runs inside targets;
* :mod:`.contract` -- what a result file holds (:func:`validate_result`) and non-paired claims (:func:`claim`);
* ``<paper>/<topic>.py`` -- the targets of one notebook.

A chapter module ``lvmrepro/experiments/<paper>/<topic>.py`` registers its targets with :func:`target`::

    @target("gmm.table1", title="k-means vs G-MM", notebook="notebooks/gmm/02_clustering", item="Table 1",
            paper=PAPER_TABLE1, scales={"smoke": {...}, "default": {...}, "paper": {...}},
            params={"trials": Int(1), "eta": Float(0, 1, lo_open=True)})
    def table1(ctx):
        ...
        return {"rows": rows, "claims": [stats.paired_claim(...)], "checks": [stats.check(...)]}

:func:`run` then writes ``DIR/TARGET.json`` atomically with the seeds, the data files and their sha256,
runtime, version and git commit, our ``rows``, the ``paper``'s numbers, the ``claims`` (verdicts of the
paper's statements, decided by :mod:`lvmrepro.stats`) and the ``checks`` (properties our code guarantees).

Results are consistent by construction:

* every result is stored in the cache (``LVMREPRO_CACHE/results/TARGET/KEY.json``) under a key over
  (target, scale, parameters, seed, package source, the keys of the targets it requires); ``DIR/TARGET.json``
  is always the result of the parameters it records;
* a target that requires another (``requires=``, read with :meth:`Context.require`) takes the upstream
  from the cache entry of the upstream's parameters at its scale, records that key, and never rewrites
  an upstream file in ``DIR`` that was computed with other parameters; its own key includes the
  upstream's, so it is recomputed when the upstream changes;
* a cached result is served only when its data files still pass their checksums; a damaged cache
  entry is recomputed; every parameter override is parsed against its declared type
  (:mod:`lvmrepro.params`) and the output folder is checked before any work.
"""
from lvmrepro.experiments.cache import RunCache, cache_key, cache_path, code_digest, source_hash, verify_data  # noqa: F401,E501
from lvmrepro.experiments.context import (  # noqa: F401
    Context, check_jobs, check_seed, default_out_dir, git_commit, package_version, run,
)
from lvmrepro.experiments.contract import (  # noqa: F401
    BODY_HASH, CHECK_KEYS, CLAIM_KEYS, COMPARATIVE_KEYS, REQUIRED_KEYS, SCHEMA_VERSION, body_sha256, check_by_id,
    check_sealed, claim, claim_by_id, row_where, rows_where, seal, validate_result,
)
from lvmrepro.experiments.registry import (  # noqa: F401
    ALL_SCALES, BEYOND, SCALES, Target, book_params, check_scale, get_target, has_scale, resolve_params, target,
    targets, upstream_scale,
)

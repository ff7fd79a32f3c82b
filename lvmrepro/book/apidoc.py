"""The book's API reference: which modules it documents, what counts as their public API, and the Sphinx directive
that documents one module (listed in ``_config.yml`` under ``sphinx.extra_extensions``).

In an ``.rst`` page of ``book/api/``::

    .. api-page:: learners

gives, for each module :data:`API_MODULES` lists for the page, a section with the module's docstring, a summary table of its public classes and functions (autosummary) and each of them
with its docstring (autodoc: classes with their public methods).  The public API of a module is
:func:`public_names`: its ``__all__`` if it has one, else every class and function defined in it whose name does
not start with an underscore.  :data:`API_MODULES` lists the documented modules, page by page;
``tests/test_api_reference.py`` checks that every module of the documented packages is on a page and that the
built site's inventory holds every public name.
"""
from __future__ import annotations

import importlib
import inspect

#: the API reference's pages (``book/api/<page>.rst``) and the modules each documents, in order
API_MODULES = {
    "learners": ("lvmrepro.engine.lssvm", "lvmrepro.engine.lssvm.base", "lvmrepro.engine.lssvm.features",
                 "lvmrepro.engine.lssvm.objective", "lvmrepro.engine.lssvm.cccp", "lvmrepro.engine.lssvm.spl",
                 "lvmrepro.engine.lssvm.groupnorm", "lvmrepro.engine.lssvm.groups",
                 "lvmrepro.engine.lssvm.shared_product"),
    "inner": ("lvmrepro.engine.lssvm.inner", "lvmrepro.engine.lssvm.inner.base",
              "lvmrepro.engine.lssvm.inner.dcd", "lvmrepro.engine.lssvm.inner.nslack_dual",
              "lvmrepro.engine.lssvm.inner.cutting_plane", "lvmrepro.engine.lssvm.inner.bcfw",
              "lvmrepro.engine.lssvm.inner.nslack", "lvmrepro.engine.lssvm.inner.motif_dcd",
              "lvmrepro.engine.lssvm.inner.group_bundle"),
    "models": ("lvmrepro.engine.lssvm.models", "lvmrepro.engine.lssvm.models.enumerable",
               "lvmrepro.engine.lssvm.models.ragged", "lvmrepro.engine.lssvm.models.chain",
               "lvmrepro.tasks.digits.model", "lvmrepro.tasks.mammals.model", "lvmrepro.tasks.components.model",
               "lvmrepro.tasks.motifs.model", "lvmrepro.tasks.coref.model", "lvmrepro.tasks.scenes.model"),
    "gmm": ("lvmrepro.engine.gmm", "lvmrepro.engine.gmm.driver", "lvmrepro.engine.gmm.kmeans",
            "lvmrepro.engine.gmm.init", "lvmrepro.engine.gmm.lssvm_bounds", "lvmrepro.engine.gmm.toy1d",
            "lvmrepro.engine.kmeans"),
    "mixreg": ("lvmrepro.engine.mixreg", "lvmrepro.engine.mixreg.em", "lvmrepro.engine.mixreg.maxmin",
               "lvmrepro.engine.mixreg.minmin", "lvmrepro.engine.mixreg.relaxation", "lvmrepro.engine.mixreg.certify",
               "lvmrepro.engine.mixreg.metrics"),
    "kernels": ("lvmrepro.engine", "lvmrepro.engine.kernels", "lvmrepro.engine.validation", "lvmrepro.engine.metrics",
                "lvmrepro.tasks.coref.forest", "lvmrepro.tasks.scenes.potts", "lvmrepro.engine._kernels"),
    "stats": ("lvmrepro.stats",),
    "examples": ("lvmrepro.examples", "lvmrepro.examples.bags", "lvmrepro.examples.compare"),
    "datasets": ("lvmrepro.datasets", "lvmrepro.datasets.registry", "lvmrepro.datasets.loaders"),
}


def public_names(module_name: str) -> list[str]:
    """The public classes and functions of a module, in source order: ``__all__`` when the module defines it,
    else every class and function defined in the module (not imported into it) without a leading underscore."""
    module = importlib.import_module(module_name)
    listed = getattr(module, "__all__", None)
    if listed is not None:
        return list(listed)

    def line(obj) -> int:
        try:
            return inspect.getsourcelines(obj)[1]
        except (OSError, TypeError):           # compiled (Cython) functions have no Python source
            return 0
    found = [(name, obj) for name, obj in vars(module).items()
             if not name.startswith("_") and (inspect.isclass(obj) or inspect.isroutine(obj))
             and getattr(obj, "__module__", None) == module_name]
    return [name for name, obj in sorted(found, key=lambda item: line(item[1]))]


def reexported(module_name: str) -> list[str]:
    """The full names of the classes and functions a package imports from its own submodules (what
    ``from lvmrepro.engine.lssvm import CCCP`` offers), in the package's order."""
    module = importlib.import_module(module_name)
    if not hasattr(module, "__path__"):
        return []
    return [f"{obj.__module__}.{obj.__qualname__}" for name, obj in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isroutine(obj))
            and getattr(obj, "__module__", "").startswith(module_name + ".")]


def documented_modules() -> list[str]:
    return [m for modules in API_MODULES.values() for m in modules]


def module_rst(module_name: str) -> list[str]:
    """The reStructuredText the ``api-module`` directive expands to (see the module docstring)."""
    names = public_names(module_name)
    module = importlib.import_module(module_name)
    lines = [f".. automodule:: {module_name}", "   :no-members:", ""]
    exported = reexported(module_name)
    if exported:
        lines += [".. rubric:: Imported from its submodules", "", ".. autosummary::", "   :nosignatures:", ""]
        lines += [f"   ~{full[len(module_name) + 1:]}" for full in exported] + [""]   # relative: autosummary's rule
    if not names:
        return lines
    lines += [".. autosummary::", "   :nosignatures:", ""] + [f"   {name}" for name in names] + [""]
    for name in names:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            lines += [f".. autoclass:: {name}", "   :members:", "   :show-inheritance:", ""]
        else:
            lines += [f".. autofunction:: {name}", ""]
    return lines


def resolve(target: str, module: str | None = None, cls: str | None = None):
    """The Python object a cross-reference ``target`` names, seen from ``module`` (and class ``cls``) as Sphinx's
    Python domain reads it (the name itself, then inside the class, then inside the module); ``None`` when no such
    object exists.  Leading ``.`` and ``~`` are Sphinx markup, not part of the name."""
    target = target.lstrip("~.")
    candidates = [target]
    if module:
        if cls:
            candidates.insert(0, f"{module}.{cls}.{target}")
        candidates.insert(1 if cls else 0, f"{module}.{target}")
    for name in candidates:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:cut]))
            except Exception:             # not a module (or a module that fails to import): try a shorter prefix
                continue
            try:
                for attr in parts[cut:]:
                    obj = getattr(obj, attr) if not inspect.isclass(obj) else _class_attribute(obj, attr)
            except AttributeError:
                break
            return obj
    return None


def _class_attribute(cls, name: str):
    """An attribute of a class, including annotated-only ones (``size_w: int`` in a class body)."""
    if hasattr(cls, name):
        return getattr(cls, name)
    for klass in cls.__mro__:
        if name in getattr(klass, "__annotations__", {}):
            return klass.__annotations__[name]
    raise AttributeError(name)


def _existing_object_as_text(app, env, node, contnode):
    """A Python cross-reference the reference does not document (NumPy's types, a compiled kernel, a task's data
    module) but that names an existing object is shown as its code text, without a link; one that names no
    existing object stays unresolved, and the build (warnings as errors) fails on it."""
    if node.get("refdomain") != "py":
        return None
    if resolve(node["reftarget"], node.get("py:module"), node.get("py:class")) is None:
        return None
    return contnode


def setup(app):
    from docutils import nodes
    from docutils.statemachine import StringList
    from sphinx.util.docutils import SphinxDirective
    from sphinx.util.nodes import nested_parse_with_titles

    class ApiPage(SphinxDirective):
        """``.. api-page:: <page>`` -- every module :data:`API_MODULES` lists for the page, one section each."""
        required_arguments = 1
        has_content = False

        def run(self):
            page = self.arguments[0]
            if page not in API_MODULES:
                raise self.error(f"unknown API page {page!r}; API_MODULES has {sorted(API_MODULES)}")
            source = self.get_source_info()[0]
            sections = []
            for name in API_MODULES[page]:
                section = nodes.section(ids=[nodes.make_id(f"api-{name}")], names=[nodes.fully_normalize_name(name)])
                section += nodes.title(text=name)
                nested_parse_with_titles(self.state, StringList(module_rst(name), source=source), section)
                sections.append(section)
            return sections

    app.add_directive("api-page", ApiPage)
    app.connect("missing-reference", _existing_object_as_text)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

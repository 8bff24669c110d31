"""The method registry, the only list of method names: each file of this package defines one method (its class,
under ``@register``, with its ``name``) and may declare the method's settings (a frozen dataclass named by the
class's ``settings``); the configuration, the configuration file, ``summary.json``, the command line's options
and ``--method`` help, ``tune`` and the conformance tests all read them from here.

Owns the name -> method class mapping, finding the method files (a file added to this folder is found, even by a
process that started before it), and :func:`catalog`: what the files declare, read from their source without
importing them (the command line builds its options and help from it without loading NumPy); must not implement
a method (see :mod:`neardup.methods.base` for what a method offers every executor). Adding a method is adding
one file here (copy ``exact.py``) and its test; see docs/architecture.md.
"""

from __future__ import annotations

import ast
import importlib
import os
import pkgutil
import sys
from dataclasses import dataclass
from typing import Any

_REGISTRY: dict[str, Any] = {}
#: The modules of this package imported so far (each registers the method it defines).
_imported: set[str] = set()
_loaded = False


class MethodFileError(ValueError):
    """A method file declares its name or settings in a form the registry cannot read; names the file."""


def register(cls: Any) -> Any:
    """Class decorator: make the method class available under its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _module_names() -> list[str]:
    """This package's modules, as they are in its folder now."""
    return [info.name for info in pkgutil.iter_modules(__path__) if not info.ispkg]


def _load(rescan: bool = False) -> None:
    """Import every module of this package once (each registers the method it defines); ``rescan``: look
    again for files added since (the import system's caches cleared first)."""
    global _loaded
    if _loaded and not rescan:
        return
    _loaded = True
    if rescan:
        importlib.invalidate_caches()
    for name in _module_names():
        if name not in _imported:
            _imported.add(name)
            importlib.import_module(f"{__name__}.{name}")


def method_class(name: str) -> Any:
    """The class registered under ``name``, or None. A name not registered yet makes the registry look for new
    method files first (a file copied into this folder after the process started, e.g. by a worker's parent)."""
    _load()
    if name not in _REGISTRY:
        _load(rescan=True)
    return _REGISTRY.get(name)


def names() -> tuple[str, ...]:
    """Every registered method name, sorted.

    >>> "minhash" in names()
    True
    """
    _load()
    return tuple(sorted(_REGISTRY))


def stage_of(cls: Any) -> str:
    """The configuration key of a method's settings (``DedupConfig.<stage>``, ``<stage>__field`` options): its
    name with ``-`` as ``_``.

    >>> stage_of(method_class("retsim-partial"))
    'retsim_partial'
    """
    return str(cls.name).replace("-", "_")


def settings_classes() -> dict[str, type]:
    """The settings dataclass of every registered method that declares one, by stage (:func:`stage_of`).

    >>> settings_classes()["ngram"].__name__
    'NgramConfig'
    """
    _load()
    return {stage_of(cls): cls.settings for _, cls in sorted(_REGISTRY.items())
            if getattr(cls, "settings", None) is not None}


def get(config: Any) -> Any:
    """The method object of a :class:`~neardup.config.DedupConfig` (its settings resolved once)."""
    cls = method_class(config.method)
    if cls is None:
        raise KeyError(config.method)
    return cls(config)


# -- what the files declare, read without importing them ------------------------------------------------------


@dataclass(frozen=True)
class Setting:
    """One field of a method's settings that the command line offers: ``stage__name`` is its
    ``DedupConfig.replace`` key; ``kind`` one of ``int``, ``float``, ``bool``, ``str``; ``flag`` its option
    (metadata ``flag``, else ``--<stage>-<name>`` with ``-`` for ``_``; a bool ``--x/--no-x``)."""

    stage: str
    name: str
    kind: str
    flag: str
    help: str

    @property
    def key(self) -> str:
        return f"{self.stage}__{self.name}"


@dataclass(frozen=True)
class Declared:
    """A method file's declaration: the method's name, its module, its settings the command line offers, and
    whether its class derives from ``KeyedMethod`` by name (``keyed``: candidates from look-up keys, the methods
    the online detector can run; ``neardup online --method`` lists them)."""

    name: str
    module: str
    settings: tuple[Setting, ...] = ()
    keyed: bool = False

    @property
    def stage(self) -> str:
        return self.name.replace("-", "_")


_KINDS = ("int", "float", "bool", "str")
_catalog: tuple[tuple[tuple[str, int], ...], dict[str, Declared]] | None = None


def catalog() -> dict[str, Declared]:
    """Every method file's :class:`Declared`, by method name, read from the files' syntax trees (nothing is
    imported: the command line's options and help come from here). A file is a method file when a class in it is
    decorated ``@register``; that class's ``name`` is a string literal, and its ``settings``, where set, names a
    dataclass of the same file whose fields' ``metadata`` (a literal dict) gives ``help`` (and optionally
    ``flag``) for each field offered on the command line. :func:`_load` checks the imported classes say the same.

    >>> catalog()["ngram"].settings[0].flag
    '--ngram-max-df'
    """
    global _catalog
    folder = __path__[0]
    files = []
    for name in _module_names():
        path = os.path.join(folder, f"{name}.py")
        if os.path.exists(path):
            files.append((name, os.stat(path).st_mtime_ns))
    stamp = tuple(files)
    if _catalog is None or _catalog[0] != stamp:
        found: dict[str, Declared] = {}
        for module, _ in files:
            declared = _declared(os.path.join(folder, f"{module}.py"), module)
            if declared is not None:
                if declared.name in found:
                    raise MethodFileError(f"methods/{module}.py: method name {declared.name!r} is already declared by "
                                          f"methods/{found[declared.name].module}.py")
                found[declared.name] = declared
        _catalog = (stamp, found)
    return dict(_catalog[1])


def _declared(path: str, module: str) -> Declared | None:
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    if "register" not in source:
        return None
    tree = ast.parse(source, filename=path)
    where = f"methods/{module}.py"
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    registered = [c for c in classes.values() if any(_named(d, "register") for d in c.decorator_list)]
    if not registered:
        return None
    if len(registered) > 1:
        raise MethodFileError(f"{where}: one method a file ({', '.join(c.name for c in registered)} are registered)")
    cls = registered[0]
    attrs = {t.id: node.value for node in cls.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target]) if isinstance(t, ast.Name)
             and node.value is not None}
    name = attrs.get("name")
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value):
        raise MethodFileError(f"{where}: class {cls.name} must set name = \"...\" (a string literal: the registry "
                              "reads it without importing the file)")
    declared = Declared(name.value, module, keyed=any(_named(base, "KeyedMethod") for base in cls.bases))
    spec = attrs.get("settings")
    if spec is None or (isinstance(spec, ast.Constant) and spec.value is None):
        return declared
    if not (isinstance(spec, ast.Name) and spec.id in classes):
        raise MethodFileError(f"{where}: {cls.name}.settings must name a dataclass defined in the same file")
    settings = []
    for node in classes[spec.id].body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        annotation = ast.unparse(node.annotation)
        if "ClassVar" in annotation:
            continue
        metadata: dict[str, Any] = {}
        if isinstance(node.value, ast.Call) and _named(node.value.func, "field"):
            for kw in node.value.keywords:
                if kw.arg == "metadata":
                    try:
                        metadata = ast.literal_eval(kw.value)
                    except ValueError:
                        raise MethodFileError(f"{where}: the metadata of {spec.id}.{node.target.id} must be a literal "
                                              "dict (the command line reads it without importing the file)") from None
        if "help" not in metadata:
            continue
        kinds = [k.strip() for k in annotation.replace("Optional[", "").rstrip("]").split("|")
                 if k.strip() != "None"]
        if len(kinds) != 1 or kinds[0] not in _KINDS:
            raise MethodFileError(f"{where}: {spec.id}.{node.target.id} ({annotation}) has a command-line help but "
                                  f"no command-line type: one of {', '.join(_KINDS)}, or None")
        stem = f"{declared.stage}-{node.target.id}".replace("_", "-")
        flag = metadata.get("flag") or (f"--{stem}/--no-{stem}" if kinds[0] == "bool" else f"--{stem}")
        settings.append(Setting(declared.stage, node.target.id, kinds[0], str(flag), str(metadata["help"])))
    return Declared(declared.name, module, tuple(settings), declared.keyed)


def _named(node: ast.expr, name: str) -> bool:
    """Whether a decorator or callee is ``name`` (``name``, ``x.name``, ``name(...)``)."""
    if isinstance(node, ast.Call):
        node = node.func
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


def check_declared(cls: Any) -> None:
    """That a registered class says what its file declares (:func:`catalog`): its name, and each setting the
    command line offers with the same flag and help (a :class:`MethodFileError` naming the difference).

    >>> check_declared(method_class("ngram"))
    """
    import dataclasses

    module = cls.__module__.rsplit(".", 1)[-1]
    where = f"methods/{module}.py"
    declared = next((d for d in catalog().values() if d.module == module), None)
    if declared is None or declared.name != cls.name:
        raise MethodFileError(f"{where}: the registered name {cls.name!r} is not the file's literal name "
                              f"{declared.name if declared else None!r}")
    offered = {}
    settings = getattr(cls, "settings", None)
    if settings is not None:
        for f in dataclasses.fields(settings):
            if "help" in f.metadata:
                offered[f.name] = (f.metadata.get("flag"), f.metadata["help"])
    read = {s.name: s for s in declared.settings}
    if set(offered) != set(read) or any(h != read[n].help or (flag and flag != read[n].flag)
                                        for n, (flag, h) in offered.items()):
        raise MethodFileError(f"{where}: the settings the command line reads ({sorted(read)}) differ from the "
                              f"imported class's ({sorted(offered)})")


def _forget(name: str) -> None:
    """Unregister a method and drop its module (a test's temporary method file, once it is removed)."""
    cls = _REGISTRY.pop(name, None)
    if cls is not None:
        module = cls.__module__.rsplit(".", 1)[-1]
        _imported.discard(module)
        sys.modules.pop(cls.__module__, None)
    importlib.invalidate_caches()


__all__ = ["Declared", "MethodFileError", "Setting", "catalog", "check_declared", "get", "method_class", "names",
           "register", "settings_classes", "stage_of"]

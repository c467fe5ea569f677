"""Count how often real PyTorch code uses each torch name and keyword.

Reads the Python files and notebooks' code cells of git repositories (bare or not: the
files of HEAD, through git, so nothing is checked out or copied) and writes the counts as
JSON, with the repositories and commits scanned.  Only the counts are meant to be kept.

    python scripts/api_usage_scan.py OUT.json GITDIR[=owner/name] ...

What counts, found with ast after following each file's imports (``import torch.nn as nn``,
``from torch.nn import functional as F``, ``from torch.optim import Adam``):

* every torch path the code names, at its longest (``F.relu`` is torch.nn.functional.relu,
  ``nn.Linear`` torch.nn.Linear, ``torch.float32``), kept where it resolves in the installed
  torch, and cut after its first part that is a value rather than a module or class
  (``torch.hub.HASH_REGEX.search`` is torch.hub.HASH_REGEX); private names (a part starting
  with ``_``) and bare modules are left out;
* every method call ``.X(`` on something not imported (a value), where X is a method of
  torch.Tensor (counted as torch.Tensor.X) or else of torch.nn.Module (torch.nn.Module.X),
  except the names that Python's containers and strings, or PIL's images, have too
  (``AMBIGUOUS``: ``set.add``, ``dict.values``, ``str.split``, ``Image.resize``, ...),
  which cannot be told apart without types;
* every keyword argument given to those calls, kept where torch's parameters for the name
  include it (a ``list.sort(key=...)`` is not a Tensor.sort keyword).

Files under a tests/ folder are skipped: they exercise a library, not use torch.
"""
from __future__ import annotations

import ast
import functools
import inspect
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from collections.abc import Iterator

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from api_coverage import parameters, resolve  # noqa: E402

TENSOR_METHODS = {n for n in dir(torch.Tensor) if not n.startswith("_")}
MODULE_METHODS = {n for n in dir(torch.nn.Module) if not n.startswith("_")} - TENSOR_METHODS
AMBIGUOUS = {"add", "index", "sort", "split", "values", "resize"}


@functools.cache
def cut(path: str) -> str:
    """`path` up to its first part that is neither a module nor a class (a value's own
    attributes, as a compiled regex's .search, are not torch names)."""
    parts = path.split(".")
    for i in range(2, len(parts)):
        try:
            obj = resolve(".".join(parts[:i]), "torch")
        except (AttributeError, ImportError):
            return path
        if not (inspect.ismodule(obj) or inspect.isclass(obj)):
            return ".".join(parts[:i])
    return path


def git_files(gitdir: str) -> Iterator[tuple[str, str]]:
    """(path, text) of HEAD's .py files and notebooks, tests/ folders left out."""
    listing = subprocess.run(["git", "--git-dir", gitdir, "ls-tree", "-r", "HEAD"],
                             capture_output=True, text=True, check=True).stdout
    for line in listing.splitlines():
        meta, path = line.split("\t", 1)
        kind, sha = meta.split()[1:3]
        parts = path.split("/")
        if kind != "blob" or not path.endswith((".py", ".ipynb")) or \
                any(p in ("test", "tests") for p in parts[:-1]):
            continue
        blob = subprocess.run(["git", "--git-dir", gitdir, "cat-file", "blob", sha],
                              capture_output=True, check=True).stdout
        yield path, blob.decode("utf-8", "replace")


def notebook_source(text: str) -> str:
    """A notebook's code cells as one module; shell (!) and magic (%) lines dropped."""
    cells = json.loads(text).get("cells", [])
    lines: list[str] = []
    for cell in cells:
        if cell.get("cell_type") == "code":
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else src
            lines += [ln for ln in src.splitlines() if not ln.lstrip().startswith(("!", "%"))]
    return "\n".join(lines)


def imports(tree: ast.AST) -> tuple[dict[str, str], set[str]]:
    """(local name -> torch path, every other imported local name) of a module."""
    torch_names: dict[str, str] = {}
    others: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                local = a.asname or a.name.split(".")[0]
                if a.name == "torch" or a.name.startswith("torch."):
                    torch_names[local] = a.name if a.asname else "torch"
                else:
                    others.add(local)
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            for a in node.names:
                local = a.asname or a.name
                if node.level == 0 and (mod == "torch" or mod.startswith("torch.")):
                    torch_names[local] = f"{mod}.{a.name}"
                else:
                    others.add(local)
    return torch_names, others


def dotted(node: ast.expr, aliases: dict[str, str]) -> str | None:
    """The torch path an expression of names and attributes spells, or None."""
    if isinstance(node, ast.Name):
        return aliases.get(node.id)
    if isinstance(node, ast.Attribute):
        base = dotted(node.value, aliases)
        return None if base is None else f"{base}.{node.attr}"
    return None


class Counts:
    def __init__(self) -> None:
        self.names: Counter[str] = Counter()
        self.keywords: defaultdict[str, Counter[str]] = defaultdict(Counter)
        self._valid: dict[str, tuple[set[str], bool] | None | bool] = {}

    def _torch_params(self, path: str) -> tuple[set[str], bool] | None | bool:
        """False where `path` is not a public non-module torch name; else its parameters."""
        if path not in self._valid:
            try:
                obj = resolve(path, "torch")
            except (AttributeError, ImportError):
                obj = None
            if obj is None or any(p.startswith("_") for p in path.split(".")) or \
                    inspect.ismodule(obj):
                self._valid[path] = False
            else:
                self._valid[path] = parameters(obj, path.rsplit(".", 1)[-1]) \
                    if callable(obj) else None
        return self._valid[path]

    def add(self, path: str, call: ast.Call | None) -> None:
        short = cut(path)
        if short != path:
            path, call = short, None  # the call is the value's, not torch's
        params = self._torch_params(path)
        if params is False:
            return
        self.names[path] += 1
        for kw in call.keywords if call is not None else ():
            if kw.arg is None:
                continue  # **kwargs
            if params is None or not isinstance(params, tuple) or kw.arg in params[0] or \
                    params[1]:
                self.keywords[path][kw.arg] += 1

    def scan(self, source: str) -> None:
        tree = ast.parse(source)
        aliases, others = imports(tree)
        parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[child] = node
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, (ast.Name, ast.Attribute)):
                parent = parents.get(node)
                if isinstance(parent, ast.Attribute) and parent.value is node:
                    continue  # not the longest chain
                path = dotted(node, aliases)
                if path is not None:
                    call = parent if isinstance(parent, ast.Call) and parent.func is node else None
                    self.add(path, call)
                    continue
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                self._method_call(node, node.func, aliases, others)

    def _method_call(self, call: ast.Call, func: ast.Attribute, aliases: dict[str, str],
                     others: set[str]) -> None:
        receiver = func.value
        root = receiver
        while isinstance(root, ast.Attribute):
            root = root.value
        if isinstance(root, ast.Name) and (root.id in others or root.id in aliases):
            return  # np.sum(...), os.path.join(...), torch paths (counted above)
        if isinstance(receiver, (ast.Constant, ast.JoinedStr, ast.List, ast.Dict)):
            return  # "a,b".split(","), [..].index(..)
        if func.attr in AMBIGUOUS:
            return
        if func.attr in TENSOR_METHODS:
            self.add(f"torch.Tensor.{func.attr}", call)
        elif func.attr in MODULE_METHODS:
            self.add(f"torch.nn.Module.{func.attr}", call)


def main(argv: list[str]) -> int:
    out, specs = argv[0], argv[1:]
    counts = Counts()
    repos = []
    for spec in specs:
        gitdir, _, name = spec.partition("=")
        commit = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        files = 0
        for path, text in git_files(gitdir):
            try:
                counts.scan(notebook_source(text) if path.endswith(".ipynb") else text)
            except (SyntaxError, ValueError):
                continue  # Python 2 files, broken notebooks
            files += 1
        repos.append({"repo": name or gitdir, "commit": commit, "files": files})
        print(f"{name or gitdir}: {files} files", file=sys.stderr)
    data: dict[str, Any] = {
        "torch": torch.__version__,
        "repos": repos,
        "names": dict(sorted(counts.names.items(), key=lambda kv: (-kv[1], kv[0]))),
        "keywords": {k: dict(sorted(v.items(), key=lambda kv: (-kv[1], kv[0])))
                     for k, v in sorted(counts.keywords.items())},
    }
    with open(out, "w") as f:
        json.dump(data, f, indent=0, sort_keys=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

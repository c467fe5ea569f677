"""How much of PyTorch's API shrew has, and how much of what real code uses.

Two reports:

* ``--list``: PyTorch's public names in the modules of ``MODULES`` (dir() filtered to public
  names, plus ``__all__``), read from the installed torch, against shrew's: the names shrew
  lacks, and for names both have, the keyword parameters torch takes that shrew's signature
  does not.  Torch's builtins often have no Python signature: their docstrings' call lines
  (``add(input, other, *, alpha=1) -> Tensor``) give the parameters instead.
* the default: the usage counts of ``scripts/api_usage_counts.json`` (made by
  ``api_usage_scan.py`` from public PyTorch code) against shrew: usage-weighted coverage
  (uses of names shrew has / all uses) and distinct coverage (names shrew has / names used),
  for names and for keywords, and the gaps ranked by uses.  ``--markdown`` prints it as the
  "API coverage" section of docs/porting.md.

A name shrew has may also be *refused*: reading it raises a ShrewError that says it is not
supported and what to use instead.  Refused names are counted apart, not as present.

    python scripts/api_coverage.py [--markdown] [--top N] [--counts FILE]
    python scripts/api_coverage.py --update docs/porting.md
    python scripts/api_coverage.py --list [--module torch.nn]
"""
from __future__ import annotations

import argparse
import importlib
import inspect
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

COUNTS = Path(__file__).resolve().parent / "api_usage_counts.json"
# The torch namespaces the issue names; "torch.Tensor" stands for its methods and attributes.
MODULES = (
    "torch", "torch.Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init",
    "torch.nn.utils", "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data",
    "torch.autograd", "torch.func", "torch.cuda", "torch.backends", "torch.testing",
    "torch.amp", "torch.linalg",
)
PRESENT, REFUSED, MISSING = "present", "refused", "missing"
_MISSING = object()


def resolve(path: str, root: str) -> Any:
    """The object a dotted torch path names under `root` ("torch" or "shrew"), importing the
    submodules on the way (torch.utils.data is not an attribute until imported); raises
    AttributeError or ImportError where the path does not exist."""
    parts = path.split(".")
    if parts[0] != "torch":
        raise AttributeError(path)
    parts[0] = root
    obj: Any = importlib.import_module(root)
    for i, part in enumerate(parts[1:], start=1):
        found = getattr(obj, part, _MISSING)
        if found is _MISSING and inspect.ismodule(obj):
            found = importlib.import_module(".".join(parts[: i + 1]))
        if found is _MISSING:
            raise AttributeError(path)
        obj = found
    return obj


def shrew_status(path: str) -> tuple[str, Any]:
    """(PRESENT, obj), (REFUSED, the ShrewError's message) or (MISSING, None) for a torch
    path read under shrew."""
    from shrew import ShrewError
    try:
        return PRESENT, resolve(path, "shrew")
    except ShrewError as e:
        return REFUSED, str(e)
    except (AttributeError, ImportError):
        return MISSING, None


def _split_top(text: str) -> list[str]:
    """`text` split at the commas outside brackets."""
    out, depth, cur = [], 0, []
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p.strip() for p in out if p.strip()]


def _doc_parameters(obj: Any, name: str) -> set[str] | None:
    """The keyword parameters of the call lines in a builtin's docstring (overloads united),
    or None where it has none."""
    doc = inspect.getdoc(obj) or ""
    lines = re.findall(rf"^\s*(?:\w+\.)*{re.escape(name)}\((.*)\)\s*(?:->.*)?$", doc, re.M)
    if not lines:
        return None
    names: set[str] = set()
    for line in lines:
        for p in _split_top(line):
            if p.startswith("*") or p in ("/", "self"):
                continue  # *args, the keyword-only marker, positional-only marker
            names.add(re.split(r"[=:\s]", p, maxsplit=1)[0])
    return names


def parameters(obj: Any, name: str) -> tuple[set[str], bool] | None:
    """(keyword parameter names, whether it takes **kwargs) of a callable, a class (its
    __init__) or a method, or None where neither its signature nor its docstring says."""
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        found = _doc_parameters(obj, name)
        return None if found is None else (found, False)
    kinds = inspect.Parameter
    names = {p.name for p in sig.parameters.values()
             if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)} - {"self"}
    varkw = any(p.kind is kinds.VAR_KEYWORD for p in sig.parameters.values())
    if varkw and not names and inspect.isclass(obj):  # object.__init__(*args, **kwargs)
        return None
    return names, varkw


# ---------------------------------------------------------------- the listing (--list)


def public_names(module: str) -> list[str]:
    """A torch namespace's public names: dir() without _names, plus __all__."""
    obj = resolve(module, "torch")
    names = {n for n in dir(obj) if not n.startswith("_")}
    names |= {n for n in getattr(obj, "__all__", ()) if not n.startswith("_")}
    return sorted(names)


@dataclass
class Listing:
    module: str
    names: int = 0
    missing: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    keyword_gaps: dict[str, list[str]] = field(default_factory=dict)


def list_module(module: str) -> Listing:
    """What shrew lacks of one torch namespace."""
    out = Listing(module)
    for name in public_names(module):
        path = f"{module}.{name}"
        try:
            theirs = resolve(path, "torch")
        except (AttributeError, ImportError):
            continue  # in __all__ but not importable here (an optional dependency)
        if inspect.ismodule(theirs) and module != "torch.backends":
            continue  # submodules are namespaces of their own, not names
        if name == "TYPE_CHECKING" or \
                str(getattr(theirs, "__module__", "")).startswith(("typing", "collections")):
            continue  # the typing names a torch module imports for its annotations
        out.names += 1
        status, ours = shrew_status(path)
        if status == MISSING:
            out.missing.append(name)
        elif status == REFUSED:
            out.refused.append(name)
        elif callable(theirs) and callable(ours):
            gap = keyword_gap(theirs, ours, name)
            if gap:
                out.keyword_gaps[name] = gap
    return out


def keyword_gap(theirs: Any, ours: Any, name: str) -> list[str]:
    """The keyword parameters torch's callable takes and shrew's does not accept."""
    t, s = parameters(theirs, name), parameters(ours, name)
    if t is None or s is None or s[1]:
        return []
    return sorted(t[0] - s[0])


def print_listing(modules: tuple[str, ...]) -> None:
    for module in modules:
        listing = list_module(module)
        have = listing.names - len(listing.missing) - len(listing.refused)
        print(f"## {module}: {have}/{listing.names} present, {len(listing.refused)} refused")
        if listing.missing:
            print("missing: " + ", ".join(listing.missing))
        if listing.refused:
            print("refused: " + ", ".join(listing.refused))
        for name, gap in sorted(listing.keyword_gaps.items()):
            print(f"  {name}: lacks {', '.join(gap)}")
        print()


# ---------------------------------------------------------------- the usage report


@dataclass
class Usage:
    """The usage counts judged against shrew."""
    name_uses: int = 0
    name_uses_present: int = 0
    names: int = 0
    names_present: int = 0
    keyword_uses: int = 0
    keyword_uses_present: int = 0
    keywords: int = 0
    keywords_present: int = 0
    missing: list[tuple[str, int]] = field(default_factory=list)
    refused: list[tuple[str, int]] = field(default_factory=list)
    missing_keywords: list[tuple[str, int]] = field(default_factory=list)
    repos: list[dict[str, Any]] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        return {
            "names, usage-weighted": self.name_uses_present / max(self.name_uses, 1),
            "names, distinct": self.names_present / max(self.names, 1),
            "keywords, usage-weighted": self.keyword_uses_present / max(self.keyword_uses, 1),
            "keywords, distinct": self.keywords_present / max(self.keywords, 1),
        }


def judge(counts: dict[str, Any]) -> Usage:
    """Each counted name and keyword as present in shrew or not."""
    usage = Usage(repos=counts["repos"])
    accepts: dict[str, tuple[set[str], bool] | None] = {}
    for name, n in counts["names"].items():
        status, obj = shrew_status(name)
        usage.names += 1
        usage.name_uses += n
        if status == PRESENT:
            usage.names_present += 1
            usage.name_uses_present += n
            accepts[name] = parameters(obj, name.rsplit(".", 1)[-1]) if callable(obj) else None
        else:
            (usage.refused if status == REFUSED else usage.missing).append((name, n))
    for name, kws in counts["keywords"].items():
        for kw, n in kws.items():
            usage.keywords += 1
            usage.keyword_uses += n
            ours = accepts.get(name)
            # A present name whose parameters cannot be read is given the benefit of the doubt.
            ok = name in accepts and (ours is None or ours[1] or kw in ours[0])
            if ok:
                usage.keywords_present += 1
                usage.keyword_uses_present += n
            else:
                usage.missing_keywords.append((f"{name}({kw}=)", n))
    for gaps in (usage.missing, usage.refused, usage.missing_keywords):
        gaps.sort(key=lambda item: (-item[1], item[0]))
    return usage


def load_counts(path: Path = COUNTS) -> dict[str, Any]:
    with open(path) as f:
        data: dict[str, Any] = json.load(f)
    return data


def _gaps(items: list[tuple[str, int]], top: int) -> str:
    return ", ".join(f"`{name}` ({n})" for name, n in items[:top]) or "none"


def markdown(usage: Usage, top: int) -> str:
    files = sum(r["files"] for r in usage.repos)
    fig = usage.figures()
    lines = [
        "## API coverage",
        "",
        "Generated by `python scripts/api_coverage.py --markdown` from the usage counts in",
        "`scripts/api_usage_counts.json`, which `scripts/api_usage_scan.py` made from the",
        f"Python files and notebooks of {len(usage.repos)} public repositories ({files} files,",
        "their tests left out) that shrew's tests do not use:",
        "",
        *(f"- {r['repo']} @ {r['commit'][:7]} ({r['files']} files)" for r in usage.repos),
        "",
        "It counts every use of a PyTorch name (`torch.X`, `nn.X`, `F.X`, ..., and a method",
        "call `.X(` where X is a `torch.Tensor` or `nn.Module` method) and each keyword",
        "argument given to one.  Method calls are matched by name, since the scan cannot see",
        "types; the names Python's containers and strings or PIL's images also have (add,",
        "index, sort, split, values, resize) are left out.  A name is present when `shrew.X`",
        "resolves where the code wrote `torch.X`; a keyword, when that name's signature",
        "takes it.",
        "",
        "| measure | present / used | coverage |",
        "|---|---|---|",
        f"| names, weighted by uses | {usage.name_uses_present} / {usage.name_uses} | "
        f"{fig['names, usage-weighted']:.1%} |",
        f"| distinct names | {usage.names_present} / {usage.names} | "
        f"{fig['names, distinct']:.1%} |",
        f"| keywords, weighted by uses | {usage.keyword_uses_present} / {usage.keyword_uses} |"
        f" {fig['keywords, usage-weighted']:.1%} |",
        f"| distinct keywords | {usage.keywords_present} / {usage.keywords} | "
        f"{fig['keywords, distinct']:.1%} |",
        "",
        f"Missing names, most used first (uses): {_gaps(usage.missing, top)}.",
        "",
        f"Names that raise a ShrewError saying they are not supported: "
        f"{_gaps(usage.refused, top)}.",
        "",
        f"Missing keywords (uses): {_gaps(usage.missing_keywords, top)}.",
    ]
    return "\n".join(lines) + "\n"


def update_section(doc: Path, section: str) -> None:
    """`doc` with its "## API coverage" section (up to the next "## ") replaced."""
    old = doc.read_text()
    start = old.find("## API coverage\n")
    if start < 0:
        new = old.rstrip("\n") + "\n\n" + section
    else:
        end = old.find("\n## ", start + 1)
        new = old[:start] + section + (old[end:] if end >= 0 else "")
    doc.write_text(new)


def text(usage: Usage, top: int) -> str:
    fig = usage.figures()
    lines = [f"{k}: {v:.4f}" for k, v in fig.items()]
    lines.append(f"missing names ({len(usage.missing)}):")
    lines += [f"  {n:6d}  {name}" for name, n in usage.missing[:top]]
    lines.append(f"refused names ({len(usage.refused)}):")
    lines += [f"  {n:6d}  {name}" for name, n in usage.refused[:top]]
    lines.append(f"missing keywords ({len(usage.missing_keywords)}):")
    lines += [f"  {n:6d}  {name}" for name, n in usage.missing_keywords[:top]]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", action="store_true", help="list torch's names shrew lacks")
    ap.add_argument("--module", action="append", help="with --list: only these modules")
    ap.add_argument("--counts", type=Path, default=COUNTS)
    ap.add_argument("--markdown", action="store_true", help="docs/porting.md's section")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--update", type=Path, metavar="DOC",
                    help="replace DOC's '## API coverage' section (or append one)")
    args = ap.parse_args(argv)
    if args.list:
        print_listing(tuple(args.module or MODULES))
        return 0
    usage = judge(load_counts(args.counts))
    if args.update:
        update_section(args.update, markdown(usage, args.top))
        return 0
    sys.stdout.write(markdown(usage, args.top) if args.markdown else text(usage, args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""einsum (issue 16), lowered to diagonal, sum, permute, expand, reshape and matmul, so its
gradient and every backend come from those ops.

The equation names each operand's dims with letters; `...` stands for the dims no letter
names, which broadcast across operands as trailing dims do.  Inside this module a dim's
label is its letter's code, or -k for the k-th last dim under `...`, so that the
ellipsis dims of different operands line up from the right.  Operands are contracted
pairwise from left to right, as PyTorch does without opt_einsum; each contraction is one
batched matmul."""
from __future__ import annotations

import math
import string
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...core.autocast import autocast_op
from ...core.errors import type_name
from ...core.errors import DTypeError, ShapeError, ShrewError, ShrewTypeError
from ...core.fields import AnyTensor
from ...core.shape import fmt
from ..common import same_device

if TYPE_CHECKING:
    from ..._tensor import Tensor

Labels = list[int]
ELLIPSIS_MARK = 0  # where `...` stood in a parsed term, before its dims are known


def _error(equation: str, message: str, kind: type[ShrewError] = ShrewError) -> ShrewError:
    return kind(f"einsum: {message} (equation {equation!r})")


def _name(label: int) -> str:
    return chr(label) if label > 0 else f"'...' dim {label}"


def _parse_term(equation: str, term: str, where: str) -> Labels:
    """The letter codes of one term, with ELLIPSIS_MARK where its `...` is."""
    labels: Labels = []
    rest = term.replace(" ", "")
    while rest:
        if rest.startswith("..."):
            if ELLIPSIS_MARK in labels:
                raise _error(equation, f"{where} has more than one '...'")
            labels.append(ELLIPSIS_MARK)
            rest = rest[3:]
        elif rest[0] == ".":
            raise _error(equation, f"{where} has a '.' that is not part of '...'")
        elif rest[0] in string.ascii_letters:
            labels.append(ord(rest[0]))
            rest = rest[1:]
        else:
            raise _error(equation, f"invalid subscript {rest[0]!r} in {where}; subscripts "
                                   "must be letters a-z, A-Z")
    return labels


def _operand_labels(equation: str, term: str, index: int, x: Tensor) -> Labels:
    """One label per dim of operand `index`: its letters, and -k for the k-th last dim
    under `...`."""
    letters = _parse_term(equation, term, f"operand {index}")
    has_ellipsis = ELLIPSIS_MARK in letters
    named = len(letters) - has_ellipsis
    if x.ndim < named or (not has_ellipsis and x.ndim != named):
        raise _error(equation, f"operand {index} of shape {fmt(x.shape)} has {x.ndim} dims "
                               f"but its subscripts name {named}"
                               + ("" if has_ellipsis else " and there is no '...'"), ShapeError)
    if not has_ellipsis:
        return letters
    at = letters.index(ELLIPSIS_MARK)
    return letters[:at] + list(range(named - x.ndim, 0)) + letters[at + 1:]


def _take_diagonals(equation: str, index: int, x: Tensor,
                    labels: Labels) -> tuple[Tensor, Labels]:
    """x with each letter repeated within it reduced to its diagonal, so that each label
    names one dim."""
    while len(set(labels)) < len(labels):
        first = next(i for i, label in enumerate(labels) if labels.count(label) > 1)
        second = labels.index(labels[first], first + 1)
        if x.shape[first] != x.shape[second]:
            raise _error(equation, f"subscript {_name(labels[first])} is repeated for operand "
                                   f"{index} of shape {fmt(x.shape)} but its sizes differ, "
                                   f"{x.shape[first]} != {x.shape[second]}", ShapeError)
        x = x.diagonal(0, first, second)  # the diagonal becomes the last dim
        labels = [lab for i, lab in enumerate(labels) if i not in (first, second)] + \
            [labels[first]]
    return x, labels


def _label_sizes(equation: str, xs: Sequence[Tensor], labels: Sequence[Labels]) -> dict[int, int]:
    """Each label's size; sizes of one label must agree, except that 1 broadcasts."""
    sizes: dict[int, int] = {}
    for index, (x, names) in enumerate(zip(xs, labels)):
        for label, n in zip(names, x.shape):
            seen = sizes.setdefault(label, n)
            if seen == 1:
                sizes[label] = n
            elif n not in (1, seen):
                raise _error(equation, f"subscript {_name(label)} has size {n} for operand "
                                       f"{index} of shape {fmt(x.shape)}, which does not "
                                       f"broadcast with the size {seen} seen before", ShapeError)
    return sizes


def _output_labels(equation: str, rhs: str | None, labels: Sequence[Labels],
                   counts: Counter[int]) -> Labels:
    """The output's labels: as the equation says after `->`, else (implicit mode) the
    ellipsis dims, then the letters used once, in alphabetical (ASCII) order."""
    hidden = -min([0, *(label for names in labels for label in names)])
    if rhs is None:
        once = sorted(label for label, n in counts.items() if n == 1 and label > 0)
        return list(range(-hidden, 0)) + once
    out = _parse_term(equation, rhs, "the output")
    for label in out:
        if label == ELLIPSIS_MARK:
            continue
        if out.count(label) > 1:
            raise _error(equation, f"output subscript {chr(label)} appears more than once")
        if label not in counts:
            raise _error(equation, f"output subscript {chr(label)} does not appear in any "
                                   "operand's subscripts")
    if ELLIPSIS_MARK not in out:  # ellipsis dims the output leaves out are summed
        return out
    at = out.index(ELLIPSIS_MARK)
    return out[:at] + list(range(-hidden, 0)) + out[at + 1:]


def _sum_out(x: Tensor, labels: Labels, keep: set[int]) -> tuple[Tensor, Labels]:
    """x summed over the dims whose label is not in keep."""
    dropped = tuple(i for i, label in enumerate(labels) if label not in keep)
    if not dropped:
        return x, labels
    return x.sum(dropped), [label for label in labels if label in keep]


def _arranged(x: Tensor, labels: Labels, order: Labels, sizes: dict[int, int]) -> Tensor:
    """x's dims permuted into `order` and broadcast to the labels' full sizes."""
    perm = [labels.index(label) for label in order]
    if perm != list(range(len(perm))):
        x = x.permute(*perm)
    full = tuple(sizes[label] for label in order)
    return x if x.shape == full else x.expand(*full)


def _contract(a: Tensor, la: Labels, b: Tensor, lb: Labels, later: set[int],
              sizes: dict[int, int]) -> tuple[Tensor, Labels]:
    """a times b, summed over the labels they share that nothing later needs: one
    matmul of [batch, a's own, summed] by [batch, summed, b's own]."""
    a, la = _sum_out(a, la, later | set(lb))
    b, lb = _sum_out(b, lb, later | set(la))
    batch = [label for label in la if label in lb and label in later]
    summed = [label for label in la if label in lb and label not in later]
    own_a = [label for label in la if label not in lb]
    own_b = [label for label in lb if label not in la]

    def size(group: Labels) -> int:
        return math.prod(sizes[label] for label in group)

    left = _arranged(a, la, batch + own_a + summed, sizes).reshape(
        size(batch), size(own_a), size(summed))
    right = _arranged(b, lb, batch + summed + own_b, sizes).reshape(
        size(batch), size(summed), size(own_b))
    result = batch + own_a + own_b
    return (left @ right).reshape(*(sizes[label] for label in result)), result


def _from_sublists(args: Sequence[Any]) -> tuple[str, tuple[Any, ...]]:
    """einsum(op0, sublist0, op1, sublist1, ..., [sublist_out]) as an equation: the
    integers 0-51 are the letters A-Z, a-z, and Ellipsis is `...`."""
    def term(sublist: Any) -> str:
        if not isinstance(sublist, (list, tuple)):
            raise ShrewTypeError(f"einsum: expected a list of subscripts, got {sublist!r}")
        letters = []
        for s in sublist:
            if s is Ellipsis:
                letters.append("...")
            elif isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 52:
                letters.append(string.ascii_letters[(s + 26) % 52])
            else:
                raise ShrewTypeError(f"einsum: subscripts in a sublist must be ints in "
                                     f"[0, 52) or Ellipsis, got {s!r}")
        return "".join(letters)

    operands = tuple(args[0::2][:len(args) // 2])
    lhs = ",".join(term(s) for s in args[1::2][:len(operands)])
    return (lhs + "->" + term(args[-1])) if len(args) % 2 else lhs, operands


@autocast_op("einsum")
def einsum(*args: Any) -> Tensor:
    """einsum(equation, *operands), einsum(equation, [operands]) or the sublist form
    einsum(op0, sublist0, op1, sublist1, ..., [sublist_out])."""
    if not args:
        raise ShrewTypeError("einsum: expected an equation and operands")
    if isinstance(args[0], str):
        equation, operands = args[0], tuple(args[1:])
        if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
            operands = tuple(operands[0])
    else:
        equation, operands = _from_sublists(args)
    for x in operands:
        if not isinstance(x, AnyTensor):
            raise ShrewTypeError(f"einsum: operands must be tensors, got {type_name(x)} "
                                 f"(equation {equation!r})")
    if any(x.dtype.is_complex for x in operands):
        from ..complex import arith  # real einsums of the parts
        return arith.einsum(equation, list(operands))
    for x in operands:
        if not x.dtype.is_floating_point:  # shrew's matmul, which einsum lowers to, is float-only
            raise _error(equation, f"needs floating-point operands, got {x.dtype}", DTypeError)
    if len({x.dtype for x in operands}) > 1:
        shown = ", ".join(str(x.dtype) for x in operands)
        raise _error(equation, f"operands must share a dtype, got {shown}", DTypeError)
    same_device("einsum", *operands)
    lhs, arrow, rhs = equation.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise _error(equation, f"the equation has subscripts for {len(terms)} operand(s) but "
                               f"{len(operands)} operand(s) were given")
    xs: list[Tensor] = []
    labels: list[Labels] = []
    counts: Counter[int] = Counter()
    for index, (term, x) in enumerate(zip(terms, operands)):
        names = _operand_labels(equation, term, index, x)
        counts.update(names)
        x, names = _take_diagonals(equation, index, x, names)
        xs.append(x)
        labels.append(names)
    sizes = _label_sizes(equation, xs, labels)
    out = _output_labels(equation, rhs if arrow else None, labels, counts)
    result, have = xs[0], labels[0]
    for k in range(1, len(xs)):
        later = set(out).union(*labels[k + 1:])
        result, have = _contract(result, have, xs[k], labels[k], later, sizes)
    result, have = _sum_out(result, have, set(out))
    return _arranged(result, have, out, sizes)

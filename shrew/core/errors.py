"""The exceptions shrew raises for bad input.  Each message names the operation.

Every error is a `ShrewError` (catch that to catch them all) of one kind below, and each kind
also inherits from the builtin class PyTorch raises for the same mistake, so that a PyTorch
program's `except RuntimeError:` (or IndexError, ...) catches shrew's error as it caught
torch's.  The table, kind -> builtin class -> the mistakes PyTorch raises it for:

    ShapeError        RuntimeError         shapes that do not fit (broadcast, matmul, reshape,
                                           cat, conv and pool sizes), sizes that overflow
    StateError        RuntimeError         the autograd or module state forbids the call:
                                           backward twice, in-place on a leaf that requires
                                           grad, backward of a tensor without grad
    ArgumentError     RuntimeError         an argument value a kernel refuses (topk's k past the
                                           size, gather's index out of bounds, gelu's
                                           approximate=, clamp with neither bound);
                                           DivisionByZeroError (integer // or % by 0) and
                                           MemoryOverlapError (an in-place write whose
                                           source overlaps it) are two of its kinds
    DTypeError        RuntimeError         a dtype the op or the device does not take
    DeviceError       RuntimeError         an unknown device, or tensors on different devices
    LinAlgError       RuntimeError         a singular or non-positive-definite matrix
                                           (torch.linalg.LinAlgError is a RuntimeError)
    ShrewIndexError   IndexError           a subscript or a dim out of range, the max of an
                                           empty dim, an index tensor of the wrong dtype
    ShrewTypeError    TypeError            an argument of the wrong Python type (a float size,
                                           a list for a tensor, a string for a number)
    ShrewValueError   ValueError           what PyTorch checks in Python: optimizer and module
                                           hyper-parameters, a DataLoader's arguments, a
                                           slice step <= 0, ragged nested lists, cat([])
    UnsupportedError  NotImplementedError  a dtype or option the op does not implement
                                           (randn of an integer dtype)
    LoadError         RuntimeError         a file shrew.load refuses or cannot read (PyTorch's
                                           stream reader raises RuntimeError); one that names
                                           a class or function it may not rebuild is also a
                                           pickle.UnpicklingError, as torch.load's
                                           weights_only refusal

`ShrewError` itself is an Exception, not one of these builtins: it is the common base, and
raising it bare would escape a PyTorch program's `except RuntimeError:`.  (Before, ShrewError
was a ValueError; the ValueError kinds above still are.)
"""
import pickle
import sys


class ShrewError(Exception):
    """Bad input to a shrew operation.  The message names the op and the culprits."""


class ShapeError(ShrewError, RuntimeError):
    """Shapes that do not fit the operation (broadcasting, sizes): PyTorch's RuntimeError."""


class StateError(ShrewError, RuntimeError):
    """A call the autograd or module state forbids (backward twice, in-place on a leaf that
    requires grad): PyTorch's RuntimeError."""


class ArgumentError(ShrewError, RuntimeError):
    """An argument value that PyTorch's kernels refuse with RuntimeError (topk's k past the
    size, gather's index out of bounds, an unknown mode string)."""


class DeviceError(ShrewError, RuntimeError):
    """An unknown or unusable device, or tensors on different devices: RuntimeError."""


class DTypeError(ShrewError, RuntimeError):
    """A dtype the operation or the device does not support: RuntimeError."""


class LinAlgError(ShrewError, RuntimeError):
    """A matrix the routine cannot handle: singular (inv, solve) or not positive-definite
    (cholesky), as torch.linalg.LinAlgError (a RuntimeError).  Found only by the computation
    itself."""


class ShrewIndexError(ShrewError, IndexError):
    """An index or a dim out of range, or an index of the wrong kind: an IndexError, as in
    PyTorch, which Python's iteration protocols rely on."""


class ShrewTypeError(ShrewError, TypeError):
    """An argument of the wrong kind, where PyTorch (and Python) raise TypeError."""


class ShrewValueError(ShrewError, ValueError):
    """A bad value that PyTorch refuses with ValueError (mostly checks written in Python:
    hyper-parameters, DataLoader arguments, a slice step <= 0)."""


class UnsupportedError(ShrewError, NotImplementedError):
    """A dtype or an option the operation does not implement: NotImplementedError."""


class LoadError(ShrewError, RuntimeError):
    """A file shrew.load refuses or cannot read: malformed, truncated, oversized."""


class RefusedGlobalError(LoadError, pickle.UnpicklingError):
    """A file that names a class or function shrew.load may not rebuild: also a
    pickle.UnpicklingError, as torch.load(weights_only=True) raises there."""


# kind -> the builtin class PyTorch raises for it (the table above, for code and tests)
BUILTIN_CLASS: dict[type[ShrewError], type[Exception]] = {
    ShapeError: RuntimeError, StateError: RuntimeError, ArgumentError: RuntimeError,
    DTypeError: RuntimeError, DeviceError: RuntimeError, LinAlgError: RuntimeError,
    ShrewIndexError: IndexError, ShrewTypeError: TypeError, ShrewValueError: ValueError,
    UnsupportedError: NotImplementedError, LoadError: RuntimeError,
}


class DivisionByZeroError(ArgumentError):
    """Integer division or modulo by zero: PyTorch's RuntimeError "ZeroDivisionError"."""


class MemoryOverlapError(ArgumentError):
    """An in-place write whose source overlaps the written tensor's memory as PyTorch
    refuses it ("unsupported operation: ... refer to a single memory location")."""


def type_name(x: object) -> str:
    """x's type for an error message, named fully where a bare name is ambiguous
    (shrew.Tensor, torch.Tensor, numpy.ndarray, torch.nn.Parameter: the shortest public
    module that exports it); builtins plain (int, list)."""
    cls = type(x)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    parts = cls.__module__.split(".")
    for i in range(1, len(parts) + 1):
        if getattr(sys.modules.get(".".join(parts[:i])), cls.__qualname__, None) is cls:
            return f"{'.'.join(parts[:i])}.{cls.__qualname__}"
    return f"{cls.__module__}.{cls.__qualname__}"


def sparse_unsupported(op: str) -> UnsupportedError:
    """The error of a dense-only operation given a sparse tensor."""
    return UnsupportedError(f"{op}: not supported for sparse COO tensors (layout "
                            f"shrew.sparse_coo); convert with .to_dense() first")


def not_a_tensor(op: str, what: str, x: object, hint: str = "") -> ShrewError:
    """The error for an argument that is not a dense Tensor: a sparse tensor given to a
    dense-only operation is UnsupportedError (as PyTorch's NotImplementedError), anything
    else ShrewTypeError."""
    if getattr(type(x), "is_sparse", False) is True:
        return sparse_unsupported(op)
    return ShrewTypeError(f"{op}: {what} must be a shrew.Tensor, got {type_name(x)}{hint}")

"""biject_to and transform_to: from a constraint to a transform that maps unconstrained
reals onto it, as torch.distributions.constraint_registry.  biject_to gives a bijection
(for HMC-style reparameterisation, log-det-Jacobians included); transform_to any map
onto the region (for unconstrained optimisation; for the simplex, softmax).  As in torch, the
matrix constraints (lower_cholesky, positive_definite) have transform_to maps only."""
from __future__ import annotations

import numbers
from typing import Any
from collections.abc import Callable

from . import constraints, transforms

__all__ = ["ConstraintRegistry", "biject_to", "transform_to"]


class ConstraintRegistry:
    """Links constraint types to factories of transforms."""

    def __init__(self) -> None:
        self._registry: dict[type, Callable[..., transforms.Transform]] = {}
        super().__init__()

    def register(self, constraint: Any, factory: Callable[..., Any] | None = None) -> Any:
        """Register factory(constraint) -> Transform for a Constraint subclass (or the
        type of a constraint object); usable as a decorator when factory is omitted."""
        if factory is None:
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or not issubclass(constraint,
                                                               constraints.Constraint):
            raise TypeError(f"Expected constraint to be either a Constraint subclass or "
                            f"instance, but got {constraint}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint: constraints.Constraint) -> transforms.Transform:
        """The transform registered for this constraint's type."""
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(
                f"Cannot transform {type(constraint).__name__} constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _bijection_for(*constraint_types: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Registers the decorated factory with both biject_to and transform_to for each type:
    its transform is a bijection onto the constraint, so it serves both."""
    def decorator(factory: Callable[..., Any]) -> Callable[..., Any]:
        for constraint_type in constraint_types:
            biject_to.register(constraint_type, factory)
            transform_to.register(constraint_type, factory)
        return factory
    return decorator


def _independent_through(registry: ConstraintRegistry) -> Callable[..., transforms.Transform]:
    """The factory for an independent constraint: the registry's transform for the base
    constraint, its event dims widened the same way."""
    def factory(constraint: Any) -> transforms.Transform:
        return transforms.IndependentTransform(registry(constraint.base_constraint),
                                               constraint.reinterpreted_batch_ndims)
    return factory


biject_to.register(constraints.independent, _independent_through(biject_to))
transform_to.register(constraints.independent, _independent_through(transform_to))


def _exp_then_affine(loc: Any, scale: Any) -> transforms.Transform:
    return transforms.ComposeTransform([transforms.ExpTransform(),
                                        transforms.AffineTransform(loc, scale)])


@_bijection_for(constraints.real)
def _transform_to_real(constraint: Any) -> transforms.Transform:
    return transforms.identity_transform


@_bijection_for(constraints.positive, constraints.nonnegative)
def _transform_to_positive(constraint: Any) -> transforms.Transform:
    return transforms.ExpTransform()


@_bijection_for(constraints.greater_than, constraints.greater_than_eq)
def _transform_to_greater_than(constraint: Any) -> transforms.Transform:
    return _exp_then_affine(constraint.lower_bound, 1)


@_bijection_for(constraints.less_than)
def _transform_to_less_than(constraint: Any) -> transforms.Transform:
    return _exp_then_affine(constraint.upper_bound, -1)


@_bijection_for(constraints.interval, constraints.half_open_interval)
def _transform_to_interval(constraint: Any) -> transforms.Transform:
    lower_is_0 = isinstance(constraint.lower_bound, numbers.Number) and constraint.lower_bound == 0
    upper_is_1 = isinstance(constraint.upper_bound, numbers.Number) and constraint.upper_bound == 1
    if lower_is_0 and upper_is_1:
        return transforms.SigmoidTransform()
    loc = constraint.lower_bound
    scale = constraint.upper_bound - constraint.lower_bound
    return transforms.ComposeTransform([transforms.SigmoidTransform(),
                                        transforms.AffineTransform(loc, scale)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint: Any) -> transforms.Transform:
    return transforms.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
@transform_to.register(constraints.positive_semidefinite)
def _transform_to_positive_definite(constraint: Any) -> transforms.Transform:
    return transforms.PositiveDefiniteTransform()


@_bijection_for(constraints.corr_cholesky)
def _transform_to_corr_cholesky(constraint: Any) -> transforms.Transform:
    return transforms.CorrCholeskyTransform()

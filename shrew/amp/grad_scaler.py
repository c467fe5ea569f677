"""``torch.amp.GradScaler``: dynamic loss scaling for float16 training.

The loss is multiplied by a scale before backward so that small gradients survive
float16's range; ``unscale_`` divides each optimizer's gradients by it in place and
notes, on the device, whether any is inf or NaN; ``step`` then steps the optimizer
unless one was (that step is skipped), and ``update`` halves the scale after an overflow
(``backoff_factor``) or doubles it after ``growth_interval`` clean steps
(``growth_factor``), as PyTorch's ``_amp_update_scale_``.  The scale and the growth
tracker are 0-d tensors on the loss's device; the one read back to the host per step is
the overflow flag that ``step`` must branch on."""
from __future__ import annotations

import enum
import warnings
from collections import defaultdict
from typing import Any, ClassVar

from .. import _tensor
from ..backends import registry
from ..core.errors import ShrewTypeError, ShrewValueError, StateError
from ..core.dtype import float16, float32, int32
from ..core.grad_mode import no_grad
from ..ops.creation import full
from ..ops.shape.recorded import stack

__all__ = ["GradScaler", "OptState"]

Tensor = _tensor.Tensor


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state() -> dict[str, Any]:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _device_usable(device: str) -> bool:
    try:
        return any(d.partition(":")[0] == device.partition(":")[0]
                   for d in registry.devices())
    except Exception:
        return False


class GradScaler:
    """PyTorch's GradScaler for `device` ("cuda" by default, as PyTorch's; "cpu" and
    "opencl" work too).  Disabled (every method a pass-through) with enabled=False, or,
    with a warning, where `device` has no usable device, as PyTorch's without CUDA."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = str(device)
        self._enabled = enabled
        if enabled and not _device_usable(self._device):
            warnings.warn(f"torch.amp.GradScaler is enabled, but {self._device} is not "
                          f"available.  Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if not growth_factor > 1.0:
                raise ShrewValueError(f"GradScaler: growth_factor must be > 1.0, got "
                                      f"{growth_factor}")
            if not backoff_factor < 1.0:
                raise ShrewValueError(f"GradScaler: backoff_factor must be < 1.0, got "
                                      f"{backoff_factor}")
        self._init_scale = float(init_scale)
        self._scale: Tensor | None = None
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._growth_tracker: Tensor | None = None
        self._per_optimizer_states: defaultdict[int, dict[str, Any]] = defaultdict(
            _fresh_state)

    # -- the scale ---------------------------------------------------------------------
    def _lazy_init_scale_growth_tracker(self, device: str) -> None:
        self._scale = full((), self._init_scale, dtype=float32, device=device)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=int32,
                                    device=device)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple[Tensor, Tensor]:
        if self._scale is None or self._growth_tracker is None:
            raise StateError(f"GradScaler.{funcname}: attempted {funcname} but the scale "
                             f"is not initialised: call scale() on a loss first "
                             f"(this may mean the scaler was never used)")
        return self._scale, self._growth_tracker

    def scale(self, outputs: Any) -> Any:
        """outputs (a tensor, or tensors in lists, tuples and dicts) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            assert self._scale is not None
            return outputs * self._scale.to(outputs.device)
        if isinstance(outputs, (list, tuple)):
            scaled = [self.scale(v) for v in outputs]
            return scaled if isinstance(outputs, list) else type(outputs)(scaled)
        if isinstance(outputs, dict):
            return {k: self.scale(v) for k, v in outputs.items()}
        raise ShrewValueError(f"GradScaler.scale: outputs must be a Tensor or an iterable "
                              f"of Tensors, got {type(outputs).__name__}")

    # -- unscaling and the overflow check ------------------------------------------------
    def _unscale_grads_(self, optimizer: Any, inv_scale: Tensor, allow_fp16: bool,
                        ) -> dict[str, Tensor]:
        """Each gradient times inv_scale, in place; per device, a float32 0-d tensor that
        is 1.0 where some gradient held an inf or a NaN, else 0.0."""
        per_device: dict[str, list[Tensor]] = defaultdict(list)
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    grad = param.grad
                    if grad is None:
                        continue
                    if not allow_fp16 and grad.dtype is float16:
                        raise ShrewValueError("Attempting to unscale FP16 gradients.")
                    per_device[grad.device].append(grad)
            found: dict[str, Tensor] = {}
            for device, grads in per_device.items():
                scale = inv_scale.to(device)
                peaks = []
                for g in grads:
                    g.mul_(scale.to_dtype(g.dtype) if g.dtype is not float32 else scale)
                    if g.numel():
                        # |g|'s maximum is finite exactly when every element is (amax
                        # propagates a NaN): one reduction per gradient, one flag per device
                        peaks.append(g.abs().amax().to_dtype(float32))
                if peaks:
                    finite = stack(peaks).amax().isfinite()
                    found[device] = (~finite).to_dtype(float32)
                else:
                    found[device] = full((), 0.0, dtype=float32, device=device)
        return found

    def unscale_(self, optimizer: Any) -> None:
        """Divide `optimizer`'s gradients by the scale, in place (before clipping them),
        and note whether any overflowed; once per optimizer between updates."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.UNSCALED:
            raise StateError("unscale_() has already been called on this optimizer since "
                             "the last update().")
        if state["stage"] is OptState.STEPPED:
            raise StateError("unscale_() is being called after step().")
        assert self._scale is not None
        # 1/scale in float64 rounded to float32, as PyTorch computes it
        inv_scale = self._scale.to_dtype("float64").reciprocal().to_dtype(float32)
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, inv_scale, False)
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """Unscale (unless unscale_ ran), then optimizer.step(*args, **kwargs) unless a
        gradient was inf or NaN; returns what step returned (None for a skipped step)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise StateError("Closure use is not currently supported if GradScaler is "
                             "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is OptState.STEPPED:
            raise StateError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise StateError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(v.item() for v in state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale: float | Tensor | None = None) -> None:
        """Back off after an overflow in this iteration, else count towards growth; or
        set the scale to `new_scale`."""
        if not self._enabled:
            return
        scale, tracker = self._check_scale_growth_tracker("update")
        with no_grad():
            if new_scale is not None:
                if isinstance(new_scale, Tensor):
                    if new_scale.numel() != 1 or new_scale.requires_grad:
                        raise ShrewValueError("new_scale should be a float or a 1-element "
                                              "tensor with requires_grad=False.")
                    scale.copy_(new_scale.reshape(()))
                elif isinstance(new_scale, float):
                    scale.fill_(new_scale)
                else:
                    raise ShrewTypeError(f"GradScaler.update: new_scale should be a float "
                                         f"or a tensor, got {type(new_scale).__name__}")
            else:
                found = [f.to(scale.device) for s in self._per_optimizer_states.values()
                         for f in s["found_inf_per_device"].values()]
                if not found:
                    raise StateError("No inf checks were recorded prior to update.")
                combined = found[0]
                for f in found[1:]:
                    combined = combined + f
                self._update_scale(scale, tracker, combined)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _update_scale(self, scale: Tensor, tracker: Tensor, found_inf: Tensor) -> None:
        """PyTorch's _amp_update_scale_ on the device, without reading anything back:
        an overflow multiplies the scale by backoff_factor and zeroes the tracker; else
        the tracker counts, and on reaching growth_interval the scale grows (if still
        finite) and the tracker restarts."""
        overflow = found_inf > 0
        counted = tracker + 1
        grow = (~overflow) & (counted >= self._growth_interval)
        grown = scale * self._growth_factor
        grow = grow & grown.isfinite()
        new_scale = scale.where(~overflow, scale * self._backoff_factor)
        new_scale = grown.where(grow, new_scale)
        reset = overflow | (counted >= self._growth_interval)
        zeros = full((), 0, dtype=int32, device=tracker.device)
        scale.copy_(new_scale)
        tracker.copy_(zeros.where(reset, counted.to_dtype(int32)))

    # -- inspection and settings --------------------------------------------------------
    def get_scale(self) -> float:
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale.item())

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._growth_tracker is None:
            return self._init_growth_tracker
        return int(self._growth_tracker.item())

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict[str, Any]:
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise StateError("The source state dict is empty, possibly because it was "
                             "saved from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])


class _DeprecatedGradScaler(GradScaler):
    """``torch.<device>.amp.GradScaler``: GradScaler(DEVICE, ...), with PyTorch's
    deprecation warning."""

    DEVICE: ClassVar[str]

    def __init__(self, init_scale: float = 2.0 ** 16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn(f"`torch.{self.DEVICE}.amp.GradScaler(args...)` is deprecated. Please "
                      f"use `torch.amp.GradScaler('{self.DEVICE}', args...)` instead.",
                      FutureWarning, stacklevel=2)
        super().__init__(self.DEVICE, init_scale, growth_factor, backoff_factor,
                         growth_interval, enabled)


class CUDAGradScaler(_DeprecatedGradScaler):
    """``torch.cuda.amp.GradScaler``: GradScaler("cuda", ...)."""

    DEVICE = "cuda"


class CPUGradScaler(_DeprecatedGradScaler):
    """``torch.cpu.amp.GradScaler``: GradScaler("cpu", ...)."""

    DEVICE = "cpu"

"""Helpers as torch.nn.utils: gradient clipping, parameter/vector conversion, rnn
(padding and packing variable-length sequences), parametrize / parametrizations
(weight_norm, spectral_norm, orthogonal) and prune."""
from . import parametrizations, parametrize, prune, rnn
from .clip_grad import clip_grad_norm_, clip_grad_value_
from .convert_parameters import parameters_to_vector, vector_to_parameters

__all__ = ["parametrizations", "parametrize", "prune", "rnn", "clip_grad_norm_",
           "clip_grad_value_", "parameters_to_vector", "vector_to_parameters"]

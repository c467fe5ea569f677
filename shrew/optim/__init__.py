"""Optimizers that update parameters in place on their own device, learning-rate
schedules (shrew.optim.lr_scheduler) and weight averaging (shrew.optim.swa_utils), as
torch.optim."""
from . import lr_scheduler, swa_utils
from .adam import Adam, Adamax, AdamW, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
           "Adagrad", "Adadelta", "LBFGS", "lr_scheduler", "swa_utils"]

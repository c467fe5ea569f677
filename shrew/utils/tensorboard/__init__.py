"""shrew.utils.tensorboard: PyTorch's SummaryWriter, writing TensorBoard's event files
through the `tensorboard` package (``pip install shrew[tensorboard]``)."""
try:
    import tensorboard  # noqa: F401
except ImportError as exc:  # as torch.utils.tensorboard: say what to install
    raise ImportError("shrew.utils.tensorboard needs the tensorboard package: "
                      "pip install 'shrew[tensorboard]'") from exc
from .writer import SummaryWriter

__all__ = ["SummaryWriter"]

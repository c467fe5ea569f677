"""Utilities in PyTorch's `torch.utils` layout (`shrew.utils.data`)."""

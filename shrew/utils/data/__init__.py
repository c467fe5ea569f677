"""Datasets, samplers and the DataLoader, as in `torch.utils.data`."""

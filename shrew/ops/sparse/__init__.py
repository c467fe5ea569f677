"""Sparse COO tensors (coo.py: the class and conversions) and torch.sparse's operations on
them (products.py)."""

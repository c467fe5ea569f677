"""Gradient rules too long for backprop.py's `match`: one module per op family, each rule
Tensor code (so create_graph can differentiate it again)."""

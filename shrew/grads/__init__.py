"""Gradient rules too long for a line of backprop.py's `match`, one module per op family."""

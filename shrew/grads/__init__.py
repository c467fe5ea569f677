"""Gradient rules too long for a case of backprop.py's match, one module per op family."""

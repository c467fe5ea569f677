"""Gradient rules too long for a line of backprop.py's `match`: one module per op family,
named like shrew/ops/<family>.py, each rule a function of Tensor code."""

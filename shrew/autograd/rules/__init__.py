"""The gradient rules of autograd/engine.py's `match` that take more than a few lines, one module
per op family (named like shrew/ops/<family>.py); common.py holds the helpers several
families share."""

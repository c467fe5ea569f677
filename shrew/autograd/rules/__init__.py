"""The gradient rules that autograd/engine.py's `match` calls where a rule takes more than a
few lines, one module per op family, named like the family in shrew/ops (ops/<family>.py,
or the folder ops/<family>/, whose recorded ops have rules and whose composed ones are
differentiated through their parts).  Every gradient rule is here or in the `match`;
common.py holds the helpers several families share."""

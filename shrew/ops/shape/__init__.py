"""The shape family: recorded.py holds the layout ops recorded as Op variants (reshape,
transpose, narrow and basic indexing, expand, pad, cat, contiguous); composed.py holds the
shape functions built from them (splits, flips, rolls, repeats, diagonals, the stacks)."""

"""ifpo's verifier suite: item schema, constraint registry, checkers, judges, metrics.

This package imports nothing from data_builders/, train/ or eval_hooks/ (docs/DESIGN.md, "Layout and arrows").
"""

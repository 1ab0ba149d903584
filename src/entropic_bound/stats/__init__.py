"""Experiment-independent statistics behind the verdicts (issues 19 and 20): the convergence rule,
Spearman tests that hold at few points, model-clustered shares, the pre-stated choice of one rank
estimator, and the classification of rank-over-training curves. Pure functions of arrays and tables.
"""

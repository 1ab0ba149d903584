"""E2 — rank recovery by gradient descent (C3): config.py, experiment.py, analysis.py, plots.py, claims.py."""

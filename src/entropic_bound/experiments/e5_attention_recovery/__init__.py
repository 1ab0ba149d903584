"""E5 — attention rank recovery (C7; the control of C8, decided in E6): config.py, experiment.py, analysis.py, plots.py, claims.py."""

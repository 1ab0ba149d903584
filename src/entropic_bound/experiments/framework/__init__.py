"""What every experiment is built from: config and grid, run specs and seeds, claims, verdicts, robustness and replication."""

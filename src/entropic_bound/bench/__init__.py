"""Benchmark harnesses behind ``entropic-bound bench`` (``train``: the ensemble engine against the
per-model loop and torch.func's vmap). Kept out of ``training/``: they measure the engine, they are not it."""

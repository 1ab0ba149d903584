"""E7's ensemble of nanoGPT-sized causal language models and its plain single-model reference."""

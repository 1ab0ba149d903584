"""Small causal language models on corpora of known complexity (E7)."""

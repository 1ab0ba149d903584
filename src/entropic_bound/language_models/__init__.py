"""Small causal language models on corpora of known complexity (E7).

What E7's config reads (the probes' content threshold, the training config) lives in :mod:`.names`,
which imports no torch; the parts (``corpora``, ``model``, ``training``, ``probes``) may.
"""

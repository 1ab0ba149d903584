"""Measurements of trained language models: per-head kernels and mixers, content structure, released checkpoints, recall controls."""

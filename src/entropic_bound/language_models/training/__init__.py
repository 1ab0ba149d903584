"""Training E7's language models: the ensemble trainer, its AdamW over flat buffers and the one-pass cross-entropy."""

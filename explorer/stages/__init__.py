"""The pipeline's stages, text -> pieces -> base symbols: normalizers, sequences and
pre-tokenizers, units (characters or bytes) and word markers; ``pipeline`` runs them in order
and counts the pieces the trainer learns from."""

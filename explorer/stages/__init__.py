"""The pipeline's stages, text -> pieces -> base symbols: normalizers, sequences and
pre-tokenizers, units (characters or bytes) and word markers; ``pipeline`` runs them in order
and counts the pieces the trainer learns from.

Each stage is an object in its module's registry (``registry.Registry``: name -> stage), which
is where the CLI, the app, ``trace.json`` and the file formats find it: adding a regex
pre-tokenizer is one ``RegexSplit`` entry in ``PRETOKENIZER_REGISTRY``."""

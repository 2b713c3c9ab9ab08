"""Files in and out: the project's own ``trace.json``, other tools' files (one module per format
holding its writer, its reader and how an import tells its files apart, listed in ``registry``;
``exporters`` and ``importers`` write and read any of them), the bundled pre-trained tables, and
corpora read from a user's bytes."""

"""Files in and out: the project's own ``trace.json``, the files other tools read (exporters)
and write (importers), the bundled pre-trained tables, and corpora read from a user's bytes."""

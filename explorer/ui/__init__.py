"""The app's display layer: the only part of the project that imports streamlit, pandas or altair.

- ``state``: what each browser session keeps (corpus choice, live trainer, current step)
- ``data``: cached values shared by all sessions (sample texts, corpus statistics, word counts)
- ``catalog``: the session's tokenizers (trained as of merge k, bundled, imported) under one key scheme
- ``settings``: the widgets that edit a TrainerConfig
- ``tables``: the merge history's rows, drawn as HTML (live panels) and as DataFrames
- ``charts``: altair charts built from engine records
- ``render``: the one helper that shows a token (``token_text``), chips and panels as escaped HTML
- ``explain``: sentences generated from step records
"""

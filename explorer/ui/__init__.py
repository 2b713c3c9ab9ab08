"""The app's display layer: the only part of the project that imports streamlit, pandas or altair.

- ``state``: what each browser session keeps (corpus choice, live trainer, current step)
- ``data``: cached values shared by all sessions (sample texts, corpus statistics, word counts)
- ``settings``: the widgets that edit a TrainerConfig
- ``tables`` / ``charts``: DataFrames and altair charts built from engine records
- ``render``: token chips and piece previews as escaped HTML
- ``explain``: sentences generated from step records
"""

"""The BPE core: the configuration and presets, the vocabulary's id rules, the steppable
trainer and its step records, the tokenizer, and merges recovered from a tiktoken rank table."""

"""What a tokenizer makes of text: one text's counts and round trip, evaluation merge by merge,
comparing corpora and languages, and where a token comes from."""

"""The five seed notebooks' training loops, re-typed as oracles.

Each function here is a notebook's own algorithm, written out again so that it can run next to
our trainer: ``tests/test_seeds.py`` checks that both learn the same merges on the same corpora,
and ``bench/train.py`` times these recount-everything loops against ours. They are not our
engine's code and must not be "fixed": the notebooks' quirks are kept on purpose.

* Ties go by dict order, i.e. the first pair seen wins: ``max`` over a dict (seeds 001, 002) or
  the HF course's scan that only takes a strictly larger count (seeds 000, 003, 004).
* Seed 001 merges with ``re.sub``, whose replacement is a template: a merged token made of two
  backslashes is written into its words as one.
* Seed 002's ``merge_pair`` rebuilds the whole token list for every merge.
* Vocab sizes are counted as each seed counts them: a *list* in seeds 000 and 003 (a merged
  string produced twice counts twice), a *dict* in seed 004 (it counts once), a fixed number of
  merges in seed 001, ids from 256 in seed 002.
* When no pair is left, the loops of seeds 000, 001 and 003 crash (``merge_pair(*"")`` /
  ``max()`` of an empty dict); those of seeds 002 and 004 stop.

The notebooks' globals are arguments or locals here and their prints are return values; anything
added is marked "# (not in the notebook)". Code the notebooks share verbatim is defined once: the
HF course's ``compute_pair_freqs``, ``merge_pair``, best-pair scan and training cell (seeds 000,
003 and 004; seed 004 passes ``word_freqs`` as an argument, the others read a global), and seed
002's ``get_pair_counts`` / ``merge_pair`` (its training loop and its ``encode``).
"""

from __future__ import annotations

import io
import re
from collections import defaultdict

from tokenizers.pre_tokenizers import ByteLevel

# =================================================================================================
# The HF course's functions (seeds 000, 003 and 004)
# =================================================================================================


def compute_pair_freqs(splits, word_freqs):
    """Seeds 000, 003 and 004: every adjacent pair's count, weighted by word frequency, in
    first-seen order."""
    pair_freqs = defaultdict(int)
    for word, freq in word_freqs.items():
        split = splits[word]
        if len(split) == 1:
            continue
        for i in range(len(split) - 1):
            pair = (split[i], split[i + 1])
            pair_freqs[pair] += freq
    return pair_freqs


def merge_pair(a, b, splits, word_freqs):
    """Seeds 000, 003 and 004: replace ``a b`` by ``a + b`` in every word's split, left to right."""
    for word in word_freqs:
        split = splits[word]
        if len(split) == 1:
            continue
        i = 0
        while i < len(split) - 1:
            if split[i] == a and split[i + 1] == b:
                split = split[:i] + [a + b] + split[i + 2 :]
            else:
                i += 1
        splits[word] = split
    return splits


def find_best_pair(pair_freqs):
    """Seeds 000, 003 and 004: the first pair with the highest count (only a strictly larger
    count replaces the best so far); ``("", None)`` when there is no pair."""
    best_pair = ""
    max_freq = None
    for pair, freq in pair_freqs.items():
        if max_freq is None or max_freq < freq:
            best_pair = pair
            max_freq = freq
    return best_pair, max_freq


def hf_course_train(word_freqs, splits, vocab: list, vocab_size: int):
    """Seeds 000 and 003: the HF course's training cell. Appends each merged string to the
    ``vocab`` list until it holds ``vocab_size`` entries (crashes if no pair is left first)."""
    merges = {}  # seed 000 starts from defaultdict(int), which behaves the same here
    order = []  # (not in the notebook) the merges in order, with their counts
    while len(vocab) < vocab_size:
        pair_freqs = compute_pair_freqs(splits, word_freqs)
        best_pair, max_freq = find_best_pair(pair_freqs)
        splits = merge_pair(*best_pair, splits, word_freqs)
        merges[best_pair] = best_pair[0] + best_pair[1]
        vocab.append(best_pair[0] + best_pair[1])
        order.append((best_pair, max_freq))
    return {"vocab": vocab, "merges": merges, "order": order, "splits": splits}


# =================================================================================================
# The seeds' loops
# =================================================================================================


def seed000_loop(corpus: list[str], vocab_size: int):
    """Seed 000 (HF course): str.split() words, chars, '<|endoftext|>' + sorted alphabet, first
    strictly larger count wins (so the first-seen pair among ties), stop when the *list* vocab
    reaches vocab_size (a merged string produced twice is counted twice)."""
    word_freqs = defaultdict(int)
    for text in corpus:
        for word in text.split():
            word_freqs[word] += 1
    alphabet = sorted(list(set(letter for word in word_freqs for letter in word)))
    vocab = ["<|endoftext|>"] + alphabet.copy()
    splits = {word: [c for c in word] for word in word_freqs.keys()}
    return {"alphabet": alphabet, **hf_course_train(word_freqs, splits, vocab, vocab_size)}


def seed001_loop(text: str, num_merges: int):
    """Seed 001 (Sennrich-style): words as space-separated symbols plus a '</w>' symbol, pairs
    counted over the segmented strings, ``max(pairs, key=pairs.get)``, merges applied with a
    regex over the segmented strings, a fixed number of merges."""
    EOW_TOKEN = "</w>"

    def get_initial_words(f):  # (the notebook opens a file; here the file is a StringIO)
        segmented_word_to_freq = defaultdict(int)
        for line in f:
            words = line.strip().split()
            for word in words:
                segmented_word = " ".join(list(word)) + " " + EOW_TOKEN
                segmented_word_to_freq[segmented_word] += 1
        return segmented_word_to_freq

    def get_tokens(word_to_freq):
        tokens = defaultdict(int)
        for word in word_to_freq.keys():
            for token in word.split():
                if token not in tokens:
                    tokens[token] = len(tokens)
        return tokens

    def get_stats(word_to_freq: dict):
        pairs = defaultdict(int)
        for word, freq in word_to_freq.items():
            symbols = word.split()
            for i in range(len(symbols) - 1):
                pairs[symbols[i], symbols[i + 1]] += freq
        return pairs

    def merge_word_splits(pair, v_in: dict):
        v_out = {}
        bigram = re.escape(" ".join(pair))
        p = re.compile(r"(?<!\S)" + bigram + r"(?!\S)")
        for word in v_in:
            w_out = p.sub("".join(pair), word)  # a template: '\\' in the pair becomes '\'
            v_out[w_out] = v_in[word]
        return v_out

    word_to_freq = get_initial_words(io.StringIO(text))
    vocab = get_tokens(word_to_freq)
    initial_vocab = dict(vocab)  # (not in the notebook) a copy of what it printed first
    merges = []
    counts = []  # (not in the notebook)
    for i in range(num_merges):  # noqa: B007 - the notebook's own loop, as written there
        pairs = get_stats(word_to_freq)
        best_pair = max(pairs, key=pairs.get)
        counts.append(pairs[best_pair])
        word_to_freq = merge_word_splits(best_pair, word_to_freq)
        new_token = "".join(best_pair)
        vocab[new_token] = len(vocab)
        merges.append(best_pair)
    return {"initial_vocab": initial_vocab, "merges": merges, "counts": counts, "words": list(word_to_freq.keys())}


def seed002_get_pair_counts(tokens: list[int]) -> dict[tuple[int, int], int]:
    """Seed 002's ``get_pair_counts`` (shared by its training loop and its encoder): overlapping
    pair counts, in first-seen order."""
    pair_counts = {}
    for i in range(len(tokens) - 1):
        pair = (tokens[i], tokens[i + 1])
        if pair not in pair_counts:
            pair_counts[pair] = 0
        pair_counts[pair] += 1
    return pair_counts


def seed002_merge_pair(tokens: list[int], pair: tuple[int, int], new_token_id: int) -> list[int]:
    """Seed 002's ``merge_pair``: a new list, left to right, non-overlapping."""
    merged_tokens = []
    i = 0
    while i < len(tokens):
        if i < len(tokens) - 1 and (tokens[i], tokens[i + 1]) == pair:
            merged_tokens.append(new_token_id)
            i += 2  # Skip the next token as it's part of the merged pair
        else:
            merged_tokens.append(tokens[i])
            i += 1
    return merged_tokens


def seed002_loop(tokens: list[int], vocab_size: int):
    """Seed 002 (minbpe-style): one byte sequence, overlapping pair counts, the first-seen most
    frequent pair (``max`` over the dict's keys), a new id per merge from 256, left-to-right
    non-overlapping replacement, stop after vocab_size - 256 merges or when no pair is left."""
    num_merges = vocab_size - 256
    mapping = {}
    lens = []  # (not in the notebook: it printed these) "Len of tokens after merge"
    counts = []  # (not in the notebook)
    new_tokens = tokens.copy()
    for merge_id in range(max(256, max(new_tokens)), max(256, max(new_tokens)) + num_merges):
        token_pairs = seed002_get_pair_counts(new_tokens)
        if not token_pairs:
            break  # No more pairs to merge
        top_pair = max(token_pairs.keys(), key=lambda x: token_pairs[x])
        counts.append(token_pairs[top_pair])
        new_tokens = seed002_merge_pair(new_tokens, top_pair, merge_id)
        mapping[top_pair] = merge_id
        lens.append(len(new_tokens))
    return {"mapping": mapping, "lens": lens, "counts": counts, "tokens": new_tokens}


def seed002_encode(text: str, mapping: dict[tuple[int, int], int]) -> list[int]:
    """Seed 002's ``encode``: repeatedly merge (everywhere) the present pair with the lowest id."""
    encoded_bytes = text.encode("utf-8")
    int_reps = list(map(int, encoded_bytes))
    while True:
        pairs = seed002_get_pair_counts(int_reps)
        if len(pairs) > 0:
            selected_pair = min(pairs, key=lambda x: mapping.get(x, float("inf")))
        else:
            break
        if selected_pair not in mapping:
            break
        new_token = mapping[selected_pair]
        int_reps = seed002_merge_pair(int_reps, selected_pair, new_token)
    return int_reps


def seed003_loop(corpus: list[str], target_vocab_size: int, *, premerge=None):
    """Seed 003: seed 000's loop on HF's GPT-2 byte-level pre-tokenizer output, with the alphabet
    built in first-seen order and then sorted. ``premerge`` replays the notebook's out-of-band
    ``splits = merge_pair("Ġ", "t", splits)`` cell (the merge is applied but not recorded)."""
    pre_tokenizer = ByteLevel(add_prefix_space=False)  # what GPT-2's backend_tokenizer holds
    word_freqs = defaultdict(int)
    for txt in corpus:
        word_with_offset = pre_tokenizer.pre_tokenize_str(txt)
        new_word = [word for word, _ in word_with_offset]
        for w in new_word:
            word_freqs[w] += 1
    alphabet = []
    for word in word_freqs:
        for c in word:
            if c not in alphabet:
                alphabet.append(c)
    alphabet.sort()
    vocab = ["<|endoftext|>"] + alphabet.copy()
    splits = {word: [c for c in word] for word in word_freqs.keys()}
    if premerge is not None:
        splits = merge_pair(*premerge, splits, word_freqs)
    return {"alphabet": alphabet, **hf_course_train(word_freqs, splits, vocab, target_vocab_size)}


def seed004_loop(corpus: list[str], vocab_size: int):
    """Seed 004: collapse whitespace, split, 'Ġ' appended to each word, chars; a vocab *dict*
    (so a merged string produced twice counts once), stop at vocab_size or when no pair is left.
    Also returns the notebook's ``tokenize`` with its BPE-dropout."""
    SPACE_NORMALIZER = re.compile(r"\s+")

    def line_split(line):
        line = SPACE_NORMALIZER.sub(" ", line)
        line = line.strip()
        words = line.split()
        words = [word + "Ġ" for word in words]
        return words

    word_freqs = defaultdict(int)
    for text in corpus:
        words = line_split(text)
        for word in words:
            word_freqs[word] += 1

    vocab = defaultdict(int)
    for word in word_freqs.keys():
        for letter in word:
            vocab[letter] += word_freqs[word]

    splits = {word: [c for c in word] for word in word_freqs.keys()}

    merges = {}
    order = []  # (not in the notebook)
    while len(vocab) < vocab_size:
        pair_freqs = compute_pair_freqs(splits, word_freqs)
        best_pair, max_freq = find_best_pair(pair_freqs)
        if max_freq is None:
            break
        splits = merge_pair(*best_pair, splits, word_freqs)
        merges[best_pair] = best_pair[0] + best_pair[1]
        vocab[best_pair[0] + best_pair[1]] = max_freq
        order.append((best_pair, max_freq))

    def tokenize(text, dropout=0.0, rng=None):  # (the notebook's dropout and random are globals)
        words = line_split(text)
        splits = [[c for c in word] for word in words]
        for pair, merge in merges.items():
            for idx, split in enumerate(splits):
                i = 0
                while i < len(split) - 1:
                    if split[i] == pair[0] and split[i + 1] == pair[1]:
                        if rng is not None and rng.random() < dropout:
                            i += 1
                            continue
                        split = split[:i] + [merge] + split[i + 2 :]
                    else:
                        i += 1
                splits[idx] = split
        return sum(splits, [])

    sorted_vocab = sorted(vocab.items(), key=lambda x: x[1], reverse=True)
    return {"vocab": sorted_vocab, "merges": merges, "order": order, "tokenize": tokenize}

"""Comparing corpora and languages under one tokenizer configuration.

For corpora A, B, ... and either a training configuration (each corpus gets its own tokenizer)
or one bundled pretrained tokenizer (the same for all):

    curves        tokens after k merges on each corpus: while training (train-on-each) and
                  replayed on a held-out 10% by a tokenizer trained on the other 90%
    cross[A][B]   evaluate(tokenizer of A, text of B): bytes per token, tokens per word
    overlap       Jaccard, shared and unique merged tokens of each pair of tokenizers (with one
                  pretrained tokenizer: of the tokens each corpus actually uses)
    lengths       how many tokens of each length (bytes, or characters) each corpus is cut into
    languages     fertility (tokens per word, Rust et al. 2021), parity (tokens for a text
                  over tokens for the same content in the reference language, Petrov et al.
                  2023) and Rényi efficiency (Zouhar et al. 2023) of parallel texts, per
                  tokenizer, and the Gini coefficient of each tokenizer's token counts over them

Every result is computed by a small function of its inputs; ``compare_corpora`` runs them all
with a progress callback and an optional shared memo (the app keeps one ``Memo`` per server
process, so a corpus trained once is not trained again by the next comparison or student).
Each corpus is encoded once by its own tokenizer for its used tokens, its lengths and its
diagonal cell. The languages under the bundled tables depend on no request: they are counted
once per process (``table_language_rows``; ``warm_languages`` counts them ahead, at server start).
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

from ..bpe.config import EncodeOptions, TrainerConfig
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..errors import ConfigError
from ..formats.corpora import list_samples, read_sample
from ..formats.pretrained import PRETRAINED, load_pretrained
from ..stages.pipeline import count_words
from ..stages.units import display_to_bytes
from .evaluate import Evaluation, curve_points, evaluate, evaluate_ids, piece_counts, replay
from .fairness import gini

__all__ = [
    "HELDOUT_FRACTION",
    "Overlap",
    "LanguageRow",
    "CorpusRun",
    "Comparison",
    "Memo",
    "heldout_split",
    "overlap",
    "merged_tokens",
    "used_tokens",
    "token_lengths",
    "language_rows",
    "language_gini",
    "table_language_rows",
    "parallel_samples",
    "warm_languages",
    "compare_corpora",
    "compare_job",
    "comparison_key",
]

HELDOUT_FRACTION = 0.1
_LONGEST = 10  # longest tokens listed per side of an overlap


def heldout_split(text: str, fraction: float = HELDOUT_FRACTION) -> tuple[str, str]:
    """(train, held-out): the held-out part is the last ``fraction`` of the text, cut at the
    line break nearest to that point when there is one near it (so no word is split).

    >>> heldout_split("one\\ntwo\\nthree\\nfour\\nfive\\nsix\\nseven\\neight\\nnine\\nten\\n")
    ('one\\ntwo\\nthree\\nfour\\nfive\\nsix\\nseven\\neight\\nnine\\n', 'ten\\n')
    """
    if not 0 < fraction < 1:
        raise ConfigError("the held-out fraction must be between 0 and 1")
    cut = round(len(text) * (1 - fraction))
    window = max(1, len(text) // 20)
    before = text.rfind("\n", max(0, cut - window), cut)
    after = text.find("\n", cut, min(len(text), cut + window))
    options = [i + 1 for i in (before, after) if i >= 0]
    if options:
        cut = min(options, key=lambda i: abs(i - cut))
    return text[:cut], text[cut:]


@dataclass(frozen=True)
class Overlap:
    """Two token sets side by side; the longest tokens only in each, longest first."""

    a: str
    b: str
    shared: int
    only_a: int
    only_b: int
    longest_only_a: tuple[str, ...]
    longest_only_b: tuple[str, ...]
    longest_shared: tuple[str, ...]

    @property
    def jaccard(self) -> float:
        union = self.shared + self.only_a + self.only_b
        return self.shared / union if union else 1.0


def _by_length(tokens: set[str], unit: str) -> tuple[str, ...]:
    size = (lambda t: len(display_to_bytes(t))) if unit == "byte" else len
    return tuple(sorted(tokens, key=lambda t: (-size(t), t))[:_LONGEST])


def overlap(a: str, tokens_a: set[str], b: str, tokens_b: set[str], *, unit: str = "char") -> Overlap:
    """Shared and unique tokens of two sets.

    >>> o = overlap("x", {"ab", "abc", "d"}, "y", {"ab", "e"})
    >>> (o.shared, o.only_a, o.only_b, round(o.jaccard, 2), o.longest_only_a)
    (1, 2, 1, 0.25, ('abc', 'd'))
    """
    return Overlap(
        a,
        b,
        len(tokens_a & tokens_b),
        len(tokens_a - tokens_b),
        len(tokens_b - tokens_a),
        _by_length(tokens_a - tokens_b, unit),
        _by_length(tokens_b - tokens_a, unit),
        _by_length(tokens_a & tokens_b, unit),
    )


def merged_tokens(tokenizer: Tokenizer) -> set[str]:
    """The tokens its merges made (not the alphabet, not special tokens)."""
    return {tokenizer.vocab[i] for i in tokenizer.merged_ids}


def used_tokens(tokenizer: Tokenizer, ids: Sequence[int]) -> set[str]:
    """The distinct tokens of an encoding that are not single symbols of the alphabet: those a
    merge made, which have a merge rank (asked per distinct id; a set of every merged id would
    be 200,000 ids for o200k_base, made again for each corpus).

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> sorted(used_tokens(tok, tok.encode("hello hello!")))
    ['hello', 'Ġhello']
    """
    rank = tokenizer.merge_rank
    return {tokenizer.vocab[i] for i in set(ids) if rank(i) is not None}


def token_lengths(tokenizer: Tokenizer, ids: Sequence[int]) -> Counter[int]:
    """Length -> how many tokens of an encoding have it: bytes at byte level, else characters
    (the unknown token counts as 1).

    >>> from explorer import load_pretrained
    >>> tok = load_pretrained("gpt2")
    >>> sorted(token_lengths(tok, tok.encode("hello hello!")).items())
    [(1, 1), (5, 1), (6, 1)]
    """
    byte = tokenizer.pipeline.unit == "byte"
    per_id = Counter(ids)
    out: Counter[int] = Counter()
    for i, n in per_id.items():
        if i == tokenizer.unk_id or tokenizer.is_special(i):
            size = 1 if i == tokenizer.unk_id else len(tokenizer.id_to_token(i))
        else:
            token = tokenizer.id_to_token(i)
            size = len(display_to_bytes(token)) if byte else len(token)
        out[size] += n
    return out


@dataclass(frozen=True)
class LanguageRow:
    """One language under one tokenizer; parity against the reference language's text."""

    tokenizer: str
    language: str
    evaluation: Evaluation
    parity: float | None  # tokens / tokens of the reference text; None without a reference

    @property
    def fertility(self) -> float | None:
        return self.evaluation.tokens_per_word

    @property
    def renyi_efficiency(self) -> float | None:
        return self.evaluation.renyi_efficiency


def language_rows(
    tokenizers: Mapping[str, Tokenizer], texts: Mapping[str, str], *, reference: str
) -> list[LanguageRow]:
    """Fertility and parity of parallel texts (the same content in each language) per tokenizer.

    >>> from explorer import load_pretrained
    >>> rows = language_rows({"gpt2": load_pretrained("gpt2")}, {"en": "Hello world", "de": "Hallo Welt"}, reference="en")
    >>> [(r.language, r.evaluation.tokens, r.parity) for r in rows]
    [('en', 2, 1.0), ('de', 4, 2.0)]
    """
    rows = []
    for name, tok in tokenizers.items():
        rows += _parity_rows(name, {lang: evaluate(tok, text) for lang, text in texts.items()}, reference=reference)
    return rows


def language_gini(rows: Iterable[LanguageRow]) -> dict[str, float]:
    """Tokenizer -> the Gini coefficient of its token counts over the languages (0 when every
    language pays the same tokens for the same content), tokenizers in the rows' order.

    >>> e = lambda tokens: Evaluation(10, 10, 2, tokens, 0)
    >>> rows = [LanguageRow(t, lang, e(n), None) for t, lang, n in [("a", "en", 4), ("a", "hi", 12), ("b", "en", 5), ("b", "hi", 5)]]
    >>> language_gini(rows)
    {'a': 0.25, 'b': 0.0}
    """
    tokens: dict[str, list[int]] = {}
    for r in rows:
        tokens.setdefault(r.tokenizer, []).append(r.evaluation.tokens)
    return {name: gini(counts) for name, counts in tokens.items()}


def _parity_rows(tokenizer: str, evals: Mapping[str, Evaluation], *, reference: str) -> list[LanguageRow]:
    """One tokenizer's rows from its evaluation of each language's text (language -> counts).

    >>> rows = _parity_rows("t", {"en": Evaluation(10, 10, 2, 4, 0), "de": Evaluation(10, 10, 2, 6, 0)}, reference="en")
    >>> [(r.language, r.parity, r.fertility) for r in rows]
    [('en', 1.0, 2.0), ('de', 1.5, 3.0)]
    """
    ref = evals.get(reference)
    return [
        LanguageRow(tokenizer, lang, e, e.tokens / ref.tokens if ref is not None and ref.tokens else None)
        for lang, e in evals.items()
    ]


@dataclass(frozen=True)
class CorpusRun:
    """What one corpus gives under the configuration."""

    name: str
    tokenizer: Tokenizer  # its own (trained on it), or the pretrained one
    train_curve: tuple[tuple[int, int], ...]  # (merges, tokens) on the whole corpus
    heldout_curve: tuple[tuple[int, int], ...]  # (merges, tokens) on the held-out 10%
    heldout_bytes: int
    corpus_bytes: int
    tokens: frozenset[str]  # merged tokens (trained) or merged tokens used (pretrained)
    lengths: Counter[int]


@dataclass(frozen=True)
class Comparison:
    names: tuple[str, ...]
    runs: dict[str, CorpusRun]
    cross: dict[tuple[str, str], Evaluation]  # (tokenizer of, text of) -> counts
    overlaps: tuple[Overlap, ...]
    pretrained: str | None


def _key(*parts: object) -> str:
    h = hashlib.sha1()
    for part in parts:
        h.update(
            repr(part).encode("utf-8", "surrogatepass")
            if not isinstance(part, str)
            else part.encode("utf-8", "surrogatepass")
        )
        h.update(b"\0")
    return h.hexdigest()


class Memo:
    """Get-or-compute, shared between threads, keeping the ``max_entries`` most recently used
    results. One lock per key: two sessions asking for the same corpus wait for one training,
    while different corpora train side by side."""

    def __init__(self, max_entries: int = 256):
        self.max_entries = max_entries
        self._store: OrderedDict[str, object] = OrderedDict()
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def __len__(self) -> int:
        return len(self._store)

    def get(self, key: str, make: Callable[[], object]):
        with self._guard:
            if key in self._store:
                self._store.move_to_end(key)
                return self._store[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._store:
                    return self._store[key]
            value = make()
            with self._guard:
                self._store[key] = value
                self._locks.pop(key, None)
                while len(self._store) > self.max_entries:
                    self._store.popitem(last=False)
            return value


# (bundled table, text) -> Evaluation, for the life of the process: the tables never change and
# the texts they are asked about are the bundled parallel ones, so nothing here depends on a request
_TABLE_EVALUATIONS = Memo(max_entries=256)


def _table_evaluation(name: str, text: str) -> Evaluation:
    return _TABLE_EVALUATIONS.get(_key("table", name, text), lambda: evaluate(load_pretrained(name), text))


def table_language_rows(
    texts: Mapping[str, str], *, reference: str, tables: Sequence[str] = tuple(PRETRAINED)
) -> list[LanguageRow]:
    """``language_rows`` of bundled tokenizers (by default all three, in ``PRETRAINED``'s
    order), each text evaluated once per process: a fresh server pays it once (or not at all
    after ``warm_languages``), every later request finds the counts.

    >>> rows = table_language_rows({"en": "Hello world", "de": "Hallo Welt"}, reference="en", tables=("gpt2",))
    >>> [(r.tokenizer, r.language, r.evaluation.tokens, r.parity) for r in rows]
    [('gpt2', 'en', 2, 1.0), ('gpt2', 'de', 4, 2.0)]
    """
    rows = []
    for name in tables:
        rows += _parity_rows(
            name, {lang: _table_evaluation(name, text) for lang, text in texts.items()}, reference=reference
        )
    return rows


def parallel_samples() -> list[str]:
    """The bundled parallel texts (the UDHR translations) by sample name, in sample order.

    >>> parallel_samples()[:3]
    ['udhr_ar.txt', 'udhr_el.txt', 'udhr_en.txt']
    """
    return [s.name for s in list_samples() if s.name.startswith("udhr_")]


def warm_languages(texts: Iterable[str] | None = None, *, tables: Sequence[str] = tuple(PRETRAINED)) -> int:
    """Load the tables and evaluate the texts (by default every bundled parallel text) under
    each, so that ``table_language_rows`` over them costs no encoding; for a server to call
    while it starts. Returns how many (table, text) counts it made or found.

    >>> warm_languages(["Hello world"], tables=("gpt2",))
    1
    """
    texts = [read_sample(name) for name in parallel_samples()] if texts is None else list(texts)
    for name in tables:
        for text in texts:
            _table_evaluation(name, text)
    return len(tables) * len(texts)


def _trained(
    text: str, config: TrainerConfig, encoding: EncodeOptions, points: int
) -> tuple[Tokenizer, tuple[tuple[int, int], ...]]:
    """The tokenizer trained on a text and its training curve at about ``points`` merge counts."""
    # no pair table, no examples: the curve needs two columns of the step log
    trainer = Trainer(count_words((text,), config), config, top_k=0, full_records=0, encoding=encoding).run()
    # columns of the step log: no record is made per step
    curve = [(0, trainer.initial_tokens), *zip(trainer.records.column("step"), trainer.records.column("tokens_after"))]
    return trainer.tokenizer(), _thin(curve, points)


def _replayed(tok: Tokenizer, text: str, points: int) -> tuple[tuple[int, int], ...]:
    """(merges, tokens) of a text under the tokenizer truncated at about ``points`` merge counts."""
    counts = replay(tok, piece_counts(tok, text))
    return tuple((k, counts[k]) for k in curve_points(tok.num_merges, points))


class _Encoded(NamedTuple):
    """What one encoding of a corpus by its own tokenizer gives."""

    used: frozenset[str]
    lengths: Counter[int]
    evaluation: Evaluation  # the cross-evaluation's diagonal cell


def _encoded(tok: Tokenizer, text: str) -> _Encoded:
    ids = tok.encode(text)
    return _Encoded(frozenset(used_tokens(tok, ids)), token_lengths(tok, ids), evaluate_ids(tok, text, ids))


def _thin(curve: Sequence[tuple[int, int]], points: int) -> tuple[tuple[int, int], ...]:
    if not curve:
        return ()
    last = curve[-1][0]
    keep = set(curve_points(last, points))
    return tuple(p for p in curve if p[0] in keep)


def compare_corpora(
    corpora: Mapping[str, str],
    *,
    config: TrainerConfig | None = None,
    encoding: EncodeOptions = EncodeOptions(),
    pretrained: tuple[str, Tokenizer] | None = None,
    points: int = 60,
    progress: Callable[[str, float], None] | None = None,
    memo: Memo | None = None,
) -> Comparison:
    """Every comparison result for the corpora (name -> text), with either a training
    ``config`` (a tokenizer per corpus) or one ``pretrained`` (name, tokenizer). ``progress``
    gets (what is being done, fraction done); ``memo`` keeps per-corpus results between calls."""
    if (config is None) == (pretrained is None):
        raise ValueError("give either a training config or a pretrained tokenizer")
    names = tuple(corpora)
    cache = memo if memo is not None else Memo()
    spec = ("pretrained", pretrained[0]) if pretrained else ("config", config, encoding)
    report = progress or (lambda what, frac: None)
    n = len(names)
    total = 3 * n + n * n
    done = 0

    def tick(what: str) -> None:
        nonlocal done
        report(what, done / total)
        done += 1

    def trained(part: str) -> tuple[Tokenizer, tuple[tuple[int, int], ...]]:
        assert config is not None  # no pretrained tokenizer: a training config (checked above)
        return _trained(part, config, encoding, points)

    runs: dict[str, CorpusRun] = {}
    own: dict[str, Evaluation] = {}  # each corpus under its own tokenizer
    for name in names:
        text = corpora[name]
        train_part, held = heldout_split(text)
        tick(f"{name}: training" if config else f"{name}: encoding")
        # the memo keeps curves at the points drawn, not every merge's count (o200k: 200,000)
        if pretrained:
            tok = pretrained[1]
            train_curve = cache.get(_key(spec, "replay", points, text), lambda: _replayed(tok, text, points))
        else:
            tok, train_curve = cache.get(_key(spec, "train", points, text), lambda: trained(text))
        tick(f"{name}: held-out curve")
        if pretrained:
            held_tok = tok
        else:
            held_tok = cache.get(_key(spec, "train", points, train_part), lambda: trained(train_part))[0]
        heldout_curve = cache.get(
            _key(spec, "heldout", points, train_part, held), lambda: _replayed(held_tok, held, points)
        )
        tick(f"{name}: encoding")
        used, lengths, own[name] = cache.get(_key(spec, "encode", text), lambda: _encoded(tok, text))
        vocab = used if pretrained else frozenset(merged_tokens(tok))
        runs[name] = CorpusRun(
            name,
            tok,
            train_curve,
            heldout_curve,
            len(held.encode("utf-8", "surrogatepass")),
            len(text.encode("utf-8", "surrogatepass")),
            vocab,
            lengths,
        )

    cross: dict[tuple[str, str], Evaluation] = {}
    for a in names:
        for b in names:
            tick(f"encoding {b} with the tokenizer of {a}")
            if a == b:
                cross[a, b] = own[a]  # encoded once, above
                continue
            if pretrained:
                continue  # one tokenizer: the matrix is its diagonal
            tok = runs[a].tokenizer
            cross[a, b] = cache.get(_key(spec, "cross", corpora[a], corpora[b]), lambda: evaluate(tok, corpora[b]))
    unit = (pretrained[1] if pretrained else runs[names[0]].tokenizer).config.unit if names else "char"
    overlaps = tuple(
        overlap(a, set(runs[a].tokens), b, set(runs[b].tokens), unit=unit)
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    )
    report("done", 1.0)
    return Comparison(names, runs, cross, overlaps, pretrained[0] if pretrained else None)


# a worker process's own memo: per-corpus results kept between the jobs that worker runs
_WORKER_MEMO = Memo(max_entries=256)


def comparison_key(
    corpora: Mapping[str, str],
    *,
    config: TrainerConfig | None,
    encoding: EncodeOptions,
    pretrained: str | None,
    points: int = 60,
) -> str:
    """One key for a whole comparison (names, texts and configuration), for a memo of results."""
    return _key("comparison", tuple(corpora.items()), config, encoding, pretrained, points)


def compare_job(
    corpora: Mapping[str, str],
    *,
    config: TrainerConfig | None = None,
    encoding: EncodeOptions = EncodeOptions(),
    pretrained: tuple[str, Tokenizer | None] | None = None,
    points: int = 60,
    progress: Callable[[float, str], None] | None = None,
) -> Comparison:
    """``compare_corpora`` as a worker process's job (``explorer.serving.workers``): a bundled table is
    named, not sent (``(name, None)``: the worker loads it once), and the runs come back without
    the pretrained tokenizer (``tokenizer=None``: the caller puts back its own; a table costs
    more to send than to keep). ``progress`` gets (fraction, what is being done)."""
    table: tuple[str, Tokenizer] | None = None
    if pretrained is not None:
        name, tok = pretrained
        table = (name, tok if tok is not None else load_pretrained(name))
    report = None if progress is None else (lambda what, frac: progress(frac, what))
    result = compare_corpora(
        corpora,
        config=config,
        encoding=encoding,
        pretrained=table,
        points=points,
        progress=report,
        memo=_WORKER_MEMO,
    )
    if pretrained is None:
        return result
    # the one place a run holds no tokenizer: on its way back from a worker, until the caller
    # puts its own table back (see the docstring)
    return replace(result, runs={name: replace(run, tokenizer=None) for name, run in result.runs.items()})  # type: ignore[arg-type]

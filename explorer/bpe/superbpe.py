"""SuperBPE (Liu et al. 2025, "SuperBPE: Space Travel for Language Models"): classical BPE over
the pre-tokenizer's pieces up to a transition, then training goes on over superwords.

At the transition (``TrainerConfig(superbpe_transition=t)``: after t merges) the texts are
counted again as superwords (the pre-tokenizer's pieces joined across spaces: ``Superwords``),
each as the tokenizer so far encodes it, and training goes on over them with the same
vocabulary: merges may now cross the spaces between words. A tokenizer of more than t merges
encodes with the superword pre-tokenizer.

This module is the whole variant: its setting (``superbpe_transition``, the command line's
``--superbpe-transition``), its hooks, and its stage, the superword twins of the pre-tokenizers
whose pieces keep their spaces, added to the pre-tokenizer registry here (``gpt2-superwords``,
...). The trainer, the config, the command line and ``trace.json`` reach it through
``bpe.variants.VARIANTS``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import regex

from ..errors import ConfigError, FormatError
from ..stages.pipeline import Pipeline, iter_sequences
from ..stages.pretokenizers import PRETOKENIZER_REGISTRY, Piece, PreTokenizer, iter_piece_texts
from .variant import MAX_VOCAB_SIZE, Training, Variant, VariantConfig

__all__ = [
    "SUPERBPE",
    "SUPERWORDS_SUFFIX",
    "SuperBPE",
    "Superwords",
    "count_words_and_superwords",
    "join_superwords",
    "superword_config",
    "superword_twin",
]

_NUMBER = regex.compile(r"\p{N}")


@dataclass(frozen=True, slots=True)
class Superwords(PreTokenizer):
    """SuperBPE's second stage (Liu et al. 2025): the pieces of ``base`` joined, so that merges
    may cross the spaces between words, except that a piece holding a digit stays on its own
    (the authors' training script keeps digits apart in both stages). Only a pre-tokenizer
    whose pieces keep their spaces has a superword twin: joined, they are the text itself. No
    other tool's file can say this split, so it has no HF, tiktoken or minbpe form.

    >>> Superwords("", "gpt2").piece_texts("By the way, it's 42 days.")
    ["By the way, it's", ' 42', ' days.']
    """

    description: str
    base: str

    def apply(self, text: str, *, pattern: str | None = None) -> list[Piece]:
        out: list[Piece] = []
        run: Piece | None = None
        for piece in PRETOKENIZER_REGISTRY.stage(self.base).apply(text, pattern=pattern):
            if _NUMBER.search(piece.text):
                if run is not None:
                    out.append(run)
                    run = None
                out.append(piece)
            elif run is None:
                run = piece
            else:
                run = Piece(run.text + piece.text, run.start, piece.end)
        if run is not None:
            out.append(run)
        return out

    def piece_texts(self, text: str, *, pattern: str | None = None) -> list[str]:
        return join_superwords(PRETOKENIZER_REGISTRY.stage(self.base).piece_texts(text, pattern=pattern))

    def to_hf(self, *, pattern: str | None = None) -> dict:
        # None would mean "no split" there: say so instead of writing a different tokenizer
        raise FormatError(
            "SuperBPE's superword pre-tokenizer (pieces joined across spaces) has no form in a Hugging Face "
            "tokenizer.json"
        )


def join_superwords(pieces: Iterable[str]) -> list[str]:
    """The base pre-tokenizer's pieces as superwords: runs without a digit joined, a piece with
    a digit kept on its own (``Superwords``; a trainer that has the pieces already joins them
    here instead of cutting the text again).

    >>> join_superwords(["By", " the", " way", ",", " 42", " days"])
    ['By the way,', ' 42', ' days']
    """
    out: list[str] = []
    run: list[str] = []
    for piece in pieces:
        if _NUMBER.search(piece):
            if run:
                out.append("".join(run))
                run = []
            out.append(piece)
        else:
            run.append(piece)
    if run:
        out.append("".join(run))
    return out


SUPERWORDS_SUFFIX = "-superwords"

# the twins: a pre-tokenizer whose pieces keep their spaces, joined, is the text itself
for _base in ("gpt2", "cl100k", "o200k"):
    PRETOKENIZER_REGISTRY[_base + SUPERWORDS_SUFFIX] = Superwords(
        f"{_base}'s pieces joined into superwords across spaces; digits kept apart (SuperBPE's second stage)", _base
    )


def superword_twin(name: str) -> str | None:
    """The registry name of a pre-tokenizer's superword twin (None: it has none).

    >>> superword_twin("gpt2"), superword_twin("whitespace")
    ('gpt2-superwords', None)
    """
    twin = name + SUPERWORDS_SUFFIX
    return twin if twin in PRETOKENIZER_REGISTRY.stages else None


def superword_config(config: Any) -> Any:
    """SuperBPE's second stage: the same config with the pre-tokenizer's superword twin and no
    transition left.

    >>> from explorer import TrainerConfig
    >>> superword_config(TrainerConfig(pretokenizer="cl100k", superbpe_transition=5)).pretokenizer
    'cl100k-superwords'
    """
    twin = superword_twin(config.pretokenizer)
    if twin is None:
        raise ConfigError(f"the pre-tokenizer {config.pretokenizer!r} has no superword twin")
    return config.replace(pretokenizer=twin, superbpe_transition=None)


def count_words_and_superwords(
    texts: str | Iterable[str], config: VariantConfig
) -> tuple[dict[str, int], dict[str, int]]:
    """``count_words`` under the config and under its superword twin at once (SuperBPE's two
    stages), each text cut into pieces once.

    >>> from explorer import TrainerConfig
    >>> count_words_and_superwords("a b, 42 a b", TrainerConfig(pretokenizer="gpt2", unit="char"))
    ({'a': 1, ' b': 2, ',': 1, ' 42': 1, ' a': 1}, {'a b,': 1, ' 42': 1, ' a b': 1})
    """
    words: Counter[str] = Counter()
    superwords: Counter[str] = Counter()
    for pieces in iter_piece_texts(
        iter_sequences(texts, config), pretokenizer=config.pretokenizer, pattern=config.pattern
    ):
        words.update(pieces)
        superwords.update(join_superwords(pieces))
    return dict(words), dict(superwords)


class SuperBPE(Variant):
    """SuperBPE's hooks: the texts counted twice (``count``), the superwords kept in the
    trainer's ``variant_state`` until the transition, then trained on (``transition``).

    >>> from explorer import TrainerConfig
    >>> cfg = TrainerConfig(superbpe_transition=10)
    >>> SUPERBPE.transition_at(cfg), SUPERBPE.tokenizer_pipeline(cfg, 11).pretokenizer
    (10, 'gpt2-superwords')
    """

    name = "superbpe"
    title = "SuperBPE"
    description = "classical BPE up to a transition, then merges across spaces: superwords (Liu et al. 2025)"
    option = "superbpe_transition"
    not_with_parity = "parity-aware training has no SuperBPE stage: leave the SuperBPE transition out"
    flag = "--superbpe-transition"
    metavar = "T"
    help = (
        "SuperBPE: after T merges, train on with the pre-tokenizer's pieces joined across spaces "
        "(superwords; pre-tokenizer gpt2, cl100k or o200k)"
    )

    def check(self, config: VariantConfig) -> None:
        transition = self.setting(config)
        if not 0 <= transition <= MAX_VOCAB_SIZE:
            raise ConfigError(f"the SuperBPE transition must be between 0 and {MAX_VOCAB_SIZE:,} merges")
        if superword_twin(config.pretokenizer) is None or config.marker != "none":
            raise ConfigError(
                "SuperBPE joins the pre-tokenizer's pieces into superwords, which needs pieces that keep "
                f"their spaces and no word marker: pre-tokenizer gpt2, cl100k or o200k (not {config.pretokenizer!r})"
                + (f", marker none (not {config.marker!r})" if config.marker != "none" else "")
            )

    def count(self, texts: str | Iterable[str], config: VariantConfig) -> tuple[dict[str, int], Any]:
        """The words and the superwords, each text cut into pieces once."""
        return count_words_and_superwords(texts, config)

    def start(self, trainer: Training, extra: Any) -> None:
        if extra is None:
            raise ConfigError("SuperBPE training reads the texts twice: start it with Trainer.from_texts")
        trainer.variant_state = dict(extra)

    def transition_at(self, config: VariantConfig) -> int | None:
        return self.setting(config)

    def transition(self, trainer: Training) -> None:
        """The texts rejoined: training goes on over the superwords, each as the tokenizer so
        far encodes it, with the same vocabulary. Stage two's index replaces stage one's."""
        superwords = trainer.variant_state
        tok = trainer.tokenizer_with(trainer.merges, superword_config(trainer.config).pipeline)
        trainer.variant_state = None
        trainer.transitioned_at = len(trainer.merges)
        trainer.restart(superwords, tok.encode_piece)

    def tokenizer_pipeline(self, config: VariantConfig, merges: int) -> Pipeline:
        """Past the transition, the superword twin's pipeline; the config's before."""
        if merges > self.setting(config):
            return superword_config(config).pipeline
        return config.pipeline


SUPERBPE = SuperBPE()

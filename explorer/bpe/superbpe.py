"""SuperBPE (Liu et al. 2025, "SuperBPE: Space Travel for Language Models"): classical BPE over
the pre-tokenizer's pieces up to a transition, then training goes on over superwords.

At the transition (``TrainerConfig(superbpe_transition=t)``: after t merges) the texts are
counted again as superwords (the pre-tokenizer's pieces joined across spaces, see
``stages.pretokenizers.Superwords``), each as the tokenizer so far encodes it, and training
goes on over them with the same vocabulary: merges may now cross the spaces between words. A
tokenizer of more than t merges encodes with the superword pre-tokenizer.

This module is the whole variant: the trainer reaches it through ``bpe.variants.VARIANTS``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError
from ..stages.pipeline import Pipeline, iter_sequences
from ..stages.pretokenizers import iter_piece_texts, join_superwords, superword_twin
from .variant import MAX_VOCAB_SIZE, Training, Variant, VariantConfig

__all__ = ["SUPERBPE", "SuperBPE", "count_words_and_superwords", "superword_config"]


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

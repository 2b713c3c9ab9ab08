"""The training variants: name -> variant (a ``bpe.variant.Variant``), the one place a variant
is added.

The trainer, the config's checks and the tokenizer's pipeline find a config's variant here
(``variant_of``); a variant's own behaviour lives in its module. Readers look the registry up
when they run, so a variant registered later (a test's, a plug-in's) is seen everywhere.
"""

from __future__ import annotations

from ..errors import ConfigError
from ..stages.registry import Registry
from .picky import PICKY
from .superbpe import SUPERBPE
from .variant import CLASSICAL, PieceMerger, TokenizerView, Variant, VariantConfig

__all__ = ["OPTIONS", "VARIANTS", "variant_of", "check_variants", "piece_merger"]

VARIANTS: Registry[Variant] = Registry("variant", {v.name: v for v in (CLASSICAL, SUPERBPE, PICKY)})
# variant name -> the TrainerConfig setting that turns it on (classical BPE has none)
OPTIONS: dict[str, str] = VARIANTS.view(lambda v: v.option)


def _chosen(config: VariantConfig) -> list[Variant]:
    return [v for v in VARIANTS.values() if v.is_on(config)]


def variant_of(config: VariantConfig) -> Variant:
    """The variant a config trains with: the one whose option it sets, else classical BPE.

    >>> from explorer import TrainerConfig
    >>> variant_of(TrainerConfig()).name, variant_of(TrainerConfig(picky=0.5)).name
    ('classical', 'picky')
    """
    chosen = _chosen(config)
    return chosen[0] if chosen else CLASSICAL


def check_variants(config: VariantConfig) -> None:
    """ConfigError when a variant cannot train under ``config``, or it asks for two at once.

    >>> from explorer import TrainerConfig
    >>> TrainerConfig(picky=0.5, superbpe_transition=3)
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: PickyBPE and SuperBPE cannot be combined: choose one of the two
    """
    chosen = _chosen(config)
    for variant in chosen:
        variant.check(config)
    if len(chosen) > 1:
        titles = sorted(v.title for v in chosen)
        raise ConfigError(f"{', '.join(titles[:-1])} and {titles[-1]} cannot be combined: choose one of the two")


def piece_merger(tokenizer: TokenizerView) -> PieceMerger | None:
    """The encoder factory's variant step: the first variant's own piece merger for the
    tokenizer (None: the merge list's ranks merge its pieces, classical BPE)."""
    for variant in VARIANTS.values():
        merger = variant.piece_merger(tokenizer)
        if merger is not None:
            return merger
    return None

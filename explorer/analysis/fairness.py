"""What a tokenizer costs each language, in three numbers from token counts.

- **Rényi efficiency** (Zouhar et al. 2023, "Tokenization and the Noiseless Channel"): the Rényi
  entropy of order α of the unigram distribution of the tokens of a text, over the log of the
  number of distinct tokens in it, as the ``tokenization-scorer`` package computes it. 1 means
  every token used equally often; a few very frequent tokens pull it down. α = 2.5 is the paper's
  choice; α = 1 is Shannon's entropy.
- **Gini coefficient** of non-negative numbers, here the token counts of parallel texts (the
  same content in each language): 0 when every language pays the same, towards 1 when one pays
  everything. Foroutan et al. 2025 (parity-aware BPE) report it over languages, e.g. 0.049 ->
  0.012.
- **Parity** (Petrov et al. 2023): a text's token count over a reference text's (the same
  content in English, say): 2.0 means twice the tokens for the same content.

Shapes::

    renyi_efficiency([3, 3, 7])                   token ids (or any hashable tokens) ...
    renyi_efficiency(Counter({"a": 2, "b": 1}))   ... or how many times each token occurs
    gini([120, 80, 300])                          one number per text
    parity({"en": 100, "hi": 480}, "en")          {"en": 1.0, "hi": 4.8}
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, TypeVar

from ..errors import ConfigError

__all__ = ["RENYI_ALPHA", "check_alpha", "renyi_efficiency", "gini", "parity"]

RENYI_ALPHA = 2.5  # Zouhar et al. 2023: the order that tracks downstream quality best

K = TypeVar("K", bound=Hashable)


def check_alpha(alpha: float, *, name: str = "alpha") -> float:
    """``alpha`` when it is an order a Rényi entropy can have here (a finite number above 0);
    ``name`` is what the message calls it (the CLI's option, say).

    >>> check_alpha(2.5)
    2.5
    >>> check_alpha(0, name="--alpha")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: --alpha must be a number above 0 (got 0)
    """
    if not (math.isfinite(alpha) and alpha > 0):
        raise ConfigError(f"{name} must be a number above 0 (got {alpha:g})")
    return alpha


def renyi_efficiency(tokens: Iterable[Hashable] | Mapping[Any, int], *, alpha: float = RENYI_ALPHA) -> float | None:
    """H_α(p) / log V: the Rényi entropy of order ``alpha`` of the tokens' unigram distribution
    p over the log of V, the number of distinct tokens seen (not the vocabulary's size), as
    ``tokenization-scorer`` computes it; ``alpha`` = 1 gives Shannon's entropy. None when fewer
    than two distinct tokens occur (log V = 0: no choice to spread over). ``tokens`` is a
    sequence of tokens or a mapping token -> count (counts of 0 are not seen).

    >>> round(renyi_efficiency([7, 7, 9, 9]), 12)  # two tokens, equally often: the most even spread
    1.0
    >>> round(renyi_efficiency(Counter({"a": 3, "b": 1})), 6), round(renyi_efficiency("aaab", alpha=1), 6)
    (0.631928, 0.811278)
    >>> renyi_efficiency([5, 5, 5]) is None
    True
    """
    check_alpha(alpha)
    counts = tokens if isinstance(tokens, Mapping) else Counter(tokens)
    seen = [c for c in counts.values() if c > 0]
    if len(seen) < 2:
        return None
    total = sum(seen)
    probs = [c / total for c in seen]
    if alpha == 1:
        entropy = -math.fsum(p * math.log(p) for p in probs)
    else:
        # log Σ p^α = α log p_max + log Σ (p / p_max)^α: no term overflows or underflows to 0
        top = max(probs)
        entropy = (alpha * math.log(top) + math.log(math.fsum((p / top) ** alpha for p in probs))) / (1 - alpha)
    return entropy / math.log(len(seen))


def gini(values: Iterable[float]) -> float:
    """The Gini coefficient of non-negative numbers: the mean absolute difference over all
    ordered pairs (each number with itself included, n² pairs) over twice the mean,
    Σᵢ Σⱼ |xᵢ − xⱼ| / (2 n² mean), computed from the sorted numbers in one pass. 0 when all are
    equal (or there are none, or all are 0); (n − 1) / n when one holds everything.

    >>> gini([5, 5, 5]), gini([0, 0, 0, 12]), gini([1, 2, 3])
    (0.0, 0.75, 0.2222222222222222)
    >>> gini([])
    0.0
    """
    xs = sorted(values)
    if xs and xs[0] < 0:
        raise ValueError("the Gini coefficient is for numbers of 0 or more")
    n, total = len(xs), math.fsum(xs)
    if not total:
        return 0.0
    # Σᵢ Σⱼ |xᵢ − xⱼ| = 2 Σᵢ (2i − n + 1) x₍ᵢ₎ for x sorted ascending, i from 0
    return math.fsum((2 * i - n + 1) * x for i, x in enumerate(xs)) / (n * total)


def parity(values: Mapping[K, float], reference: K) -> dict[K, float | None]:
    """Each value over the reference's (Petrov et al. 2023): a text's token count against the
    same content's in the reference text. All None when the reference's count is 0.

    >>> parity({"en": 100, "hi": 480, "ko": 150}, "en")
    {'en': 1.0, 'hi': 4.8, 'ko': 1.5}
    >>> parity({"en": 0, "hi": 3}, "en")
    {'en': None, 'hi': None}
    """
    if reference not in values:
        raise KeyError(reference)
    ref = values[reference]
    return {key: value / ref if ref else None for key, value in values.items()}

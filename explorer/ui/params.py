"""A link's whole numbers, read without Streamlit: the rule every page's link follows for a count
(digits only, within its bounds), used by :mod:`explorer.ui.links` and by the pages' models,
which may not import Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..errors import ConfigError

__all__ = ["MAX_STEP", "count_param", "count_or", "choice_or"]

MAX_STEP = 200_000  # the furthest step a link may name


def count_param(params: Mapping[str, str], key: str, *, low: int, high: int = MAX_STEP) -> int | None:
    """A whole number from the URL (None when absent); ConfigError says what is wrong.

    >>> count_param({"k": "12"}, "k", low=0), count_param({}, "k", low=0)
    (12, None)
    >>> count_param({"k": "1e3"}, "k", low=0)
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: k='1e3' in the link is not a whole number from 0 to 200,000
    """
    raw = params.get(key)
    if raw is None:
        return None
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 7) or not low <= int(raw) <= high:
        raise ConfigError(f"{key}={raw!r} in the link is not a whole number from {low} to {high:,}")
    return int(raw)


def count_or(params: Mapping[str, str], key: str, problems: list[str], *, low: int, high: int, default: int) -> int:
    """:func:`count_param` for a page's own link: ``default`` when absent or bad (said in ``problems``).

    >>> problems = []
    >>> count_or({"k": "x"}, "k", problems, low=0, high=9, default=3), count_or({}, "k", problems, low=0, high=9, default=4)
    (3, 4)
    >>> problems
    ["k='x' in the link is not a whole number from 0 to 9"]
    """
    try:
        value = count_param(params, key, low=low, high=high)
    except ConfigError as err:
        problems.append(str(err))
        return default
    return default if value is None else value


def choice_or(params: Mapping[str, str], key: str, options: Iterable[str], problems: list[str], *, default: str) -> str:
    """A page's own link's choice among ``options``: ``default`` when absent or not one of them
    (said in ``problems``, the value cut at 20 characters).

    >>> problems = []
    >>> choice_or({"p": "gpt9"}, "p", ("gpt2", "bytes"), problems, default="gpt2"), choice_or({}, "p", ("gpt2", "bytes"), problems, default="bytes")
    ('gpt2', 'bytes')
    >>> problems
    ["p='gpt9' is not one of gpt2, bytes"]
    """
    options = list(options)
    value = params.get(key, default)
    if value in options:
        return value
    problems.append(f"{key}={value[:20]!r} is not one of {', '.join(options)}")
    return default

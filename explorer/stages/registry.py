"""One registry per pipeline stage: name -> stage object, the one place a stage is added.

The names are what a ``TrainerConfig`` and ``trace.json`` hold; everything that lists or reads
stages finds them here (the CLI's choices, the settings widgets, ``TrainerConfig.validate``, the
exporters and importers). Readers look a registry up when they run, never copy it at import,
so an entry added later (a test's fixture, a plug-in) is seen everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import NamedTuple, Protocol, TypeVar

from ..errors import ConfigError

__all__ = ["Described", "HfParts", "Registry", "either"]


class Described(Protocol):
    """What every stage has: a sentence saying what it does (a picker's help)."""

    @property
    def description(self) -> str: ...


S = TypeVar("S", bound=Described)


class HfParts(NamedTuple):
    """A stage's share of an HF ``tokenizer.json`` where it is more than one object: steps of
    the pre-tokenizer, the decoder, and the BPE model's ``end_of_word_suffix``."""

    pre_tokenizers: tuple[dict, ...] = ()
    decoder: dict | None = None
    end_of_word_suffix: str | None = None


class Registry(MutableMapping[str, S]):
    """name -> stage, in the order registered, and plain dicts derived from it that stay in
    step with every change: ``descriptions`` (name -> what it does, read by the pickers and
    the messages that list the choices) and any other made with :meth:`view`.

    >>> from typing import NamedTuple
    >>> class Shade(NamedTuple):
    ...     description: str
    ...     warm: bool
    >>> shades = Registry("shade", {"red": Shade("like fire", True), "blue": Shade("like ice", False)})
    >>> warm = shades.view(lambda s: s.warm or None)
    >>> shades["amber"] = Shade("like honey", True)
    >>> shades.descriptions, warm
    ({'red': 'like fire', 'blue': 'like ice', 'amber': 'like honey'}, {'red': True, 'amber': True})
    >>> shades.stage("green")
    Traceback (most recent call last):
    ...
    explorer.errors.ConfigError: unknown shade 'green'; choose one of red, blue, amber
    """

    def __init__(self, kind: str, stages: Mapping[str, S]) -> None:
        self.kind = kind
        # read directly by the stage functions on hot paths (one dict look-up per call)
        self.stages: dict[str, S] = dict(stages)
        self._views: list[tuple[dict, Callable[[S], object]]] = []
        self.descriptions: dict[str, str] = self.view(lambda s: s.description)

    def stage(self, name: str) -> S:
        """The stage of that name, or a ConfigError listing the names there are."""
        try:
            return self.stages[name]
        except (KeyError, TypeError):  # TypeError: an unhashable value read from a file
            raise ConfigError(f"unknown {self.kind} {name!r}; choose one of {', '.join(self.stages)}") from None

    def view(self, pick: Callable[[S], object]) -> dict:
        """A dict name -> ``pick(stage)`` (names for which it is None left out), rebuilt on
        every change to the registry."""
        out: dict = {}
        self._views.append((out, pick))
        self._rebuild()
        return out

    def _rebuild(self) -> None:
        for out, pick in self._views:
            out.clear()
            out.update((name, v) for name, s in self.stages.items() if (v := pick(s)) is not None)

    def __getitem__(self, name: str) -> S:
        return self.stages[name]

    def __setitem__(self, name: str, stage: S) -> None:
        self.stages[name] = stage
        self._rebuild()

    def __delitem__(self, name: str) -> None:
        del self.stages[name]
        self._rebuild()

    def __iter__(self) -> Iterator[str]:
        return iter(self.stages)

    def __len__(self) -> int:
        return len(self.stages)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.stages!r})"


def either(names: Iterable[str]) -> str:
    """Names as a sentence offers them.

    >>> either(["gpt2", "cl100k", "none"]), either(["gpt2"])
    ('gpt2, cl100k or none', 'gpt2')
    """
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"

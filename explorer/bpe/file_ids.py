"""A file's own ids, kept beside the ids the merges derive.

A vocabulary's ids are derived from its merges (special tokens, the alphabet, one per merge:
``vocab.Vocab``), and the engine works in those. Some files number the same tokens otherwise:
SentencePiece writes a piece's id by its score, so Llama 2's and Mistral 7B v0.1's
``tokenizer.json`` put single characters such as "▁" after thousands of merged pieces. Such a
tokenizer carries a ``FileIds``: derived id -> the file's id. It decides nothing (the merges
still say how a text is cut); it renames ids where they leave the engine (ids a page or the
CLI shows, files written) and where they come in (ids typed to decode).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import ConfigError, DecodeError

__all__ = ["FileIds"]


class FileIds:
    """Derived id -> the file's id for the first ``len(shown)`` ids (the vocabulary's); ids past
    them (special tokens past the vocabulary, the unknown token) are their own. ``extent`` is
    one past the largest file id, so an id from there on never names a vocabulary token.

    >>> f = FileIds([0, 3, 1, 2])
    >>> f.out(1), f.out_many([0, 1, 2, 9]), f.back_many([3, 1, 9]), f.extent
    (3, [0, 3, 1, 9], [1, 2, 9], 4)
    >>> f.truncate(2).shown, f.truncate(2).extent  # the tokens of the first merges keep their ids
    ((0, 3), 4)
    >>> f.truncate(2).back_many([3, 1])
    Traceback (most recent call last):
    ...
    explorer.errors.DecodeError: id 1 (position 1) is no token of this tokenizer (as of its merges so far)
    """

    __slots__ = ("shown", "_back", "extent")

    def __init__(self, shown: Iterable[int]):
        self.shown: tuple[int, ...] = tuple(map(int, shown))
        self._back = {s: i for i, s in enumerate(self.shown)}
        if len(self._back) < len(self.shown) or (self.shown and min(self.shown) < 0):
            raise ConfigError("a file's ids must be distinct non-negative whole numbers, one per token")
        # one past the largest file id: where the ids that are their own may start (read at every
        # decode of typed ids: found once, not over the whole table each time)
        self.extent: int = max(self.shown, default=-1) + 1

    def __len__(self) -> int:
        return len(self.shown)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FileIds) and self.shown == other.shown

    def __hash__(self) -> int:
        return hash(self.shown)

    def __repr__(self) -> str:
        return f"FileIds({len(self.shown)} ids)"

    def is_identity(self) -> bool:
        """Whether every id is the file's already (no table needed).

        >>> FileIds([0, 1]).is_identity(), FileIds([1, 0]).is_identity()
        (True, False)
        """
        return self.shown == tuple(range(len(self.shown)))

    def out(self, token_id: int) -> int:
        """The file's id of a derived id."""
        return self.shown[token_id] if 0 <= token_id < len(self.shown) else token_id

    def out_many(self, ids: Iterable[int]) -> list[int]:
        shown, n = self.shown, len(self.shown)
        return [shown[i] if 0 <= i < n else i for i in ids]

    def back_many(self, ids: Sequence[int]) -> list[int]:
        """Derived ids of file ids. A file id below ``extent`` that names no token here (one a
        later merge makes, when truncated) raises DecodeError; other ids are their own (the
        tokenizer's check says whether they are tokens)."""
        back, extent = self._back, self.extent
        out = []
        for k, i in enumerate(ids):
            if isinstance(i, bool) or not isinstance(i, int) or i >= extent or i < 0:
                out.append(i)
                continue
            derived = back.get(i)
            if derived is None:
                raise DecodeError(f"id {i} (position {k}) is no token of this tokenizer (as of its merges so far)")
            out.append(derived)
        return out

    def truncate(self, n: int) -> FileIds:
        """The table of the first ``n`` ids (a tokenizer as of an earlier merge). Its extent stays
        past every file id it still names."""
        return FileIds(self.shown[: max(0, n)])

"""Where a token comes from: the tree of merges that built it, and corpus lines where it occurs.

Data shapes::

    Lineage(id=260, token="low", rank=2,            # made by merge rank 2 (training step 3)
            left=Lineage(258, "lo", 0, Lineage(0, "l", None, None, None), Lineage(1, "o", ...)),
            right=Lineage(2, "w", None, None, None))

    KeywordInContext(line=12, left="... the ", match="low", right="er house ...")
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import NamedTuple

from ..bpe.tokenizer import Tokenizer
from ..stages.markers import strip_markers
from .health import encode_own_text

__all__ = ["Lineage", "KeywordInContext", "lineage", "not_one_merge", "walk", "token_surface", "keyword_in_context"]


class Lineage(NamedTuple):
    """A token and the two tokens its merge joined (None for alphabet symbols and specials, and
    for a rank table's token that is not one merge of two lower-ranked tokens: ``whole``)."""

    id: int
    token: str
    rank: int | None
    left: Lineage | None
    right: Lineage | None
    # a rank table's token that merging its own bytes never makes (Tokenizer.made_whole): it has a
    # rank but no merge to show, and none is made up
    whole: bool = False


def lineage(tok: Tokenizer, token_id: int) -> Lineage:
    """The merge tree that built a token, down to its alphabet symbols.

    >>> from explorer import make_config, train
    >>> tok = train("low " * 5 + "lower " * 2, make_config("sennrich", num_merges=3)).tokenizer()
    >>> tree = lineage(tok, tok.token_to_id("low"))
    >>> tree.token, tree.rank, tree.left.token, tree.right.token, tree.left.left.token
    ('low', 1, 'lo', 'w', 'l')

    A rank table's token that is not one merge stops the tree (Llama 3's ``b"ektedir"``):

    >>> from explorer.bpe.ranks import tokenizer_from_ranks
    >>> table = [bytes([b]) for b in range(256)] + [b"ab", b"de", b"cd", b"abcd", b"abcde"]
    >>> lineage(tokenizer_from_ranks(table, pretokenizer="none"), 260)
    Lineage(id=260, token='abcde', rank=4, left=None, right=None, whole=True)
    """
    rank = tok.merge_rank(token_id)
    if rank is None:
        return Lineage(token_id, tok.id_to_token(token_id), None, None, None)
    if tok.made_whole(token_id):
        return Lineage(token_id, tok.id_to_token(token_id), rank, None, None, whole=True)
    a, b = tok.merges[rank]
    return Lineage(token_id, tok.id_to_token(token_id), rank, lineage(tok, a), lineage(tok, b))


def not_one_merge(tok: Tokenizer, token_id: int) -> str | None:
    """For a rank table's token that is not one merge of two lower-ranked tokens
    (``Tokenizer.made_whole``), what tiktoken does with it, in a sentence (the health scan's
    rule: its own text encoded); None for any other token.

    >>> from explorer.bpe.ranks import tokenizer_from_ranks
    >>> table = [bytes([b]) for b in range(256)] + [b"ab", b"de", b"cd", b"abcd", b"abcde"]
    >>> tok = tokenizer_from_ranks(table, pretokenizer="none")
    >>> print(not_one_merge(tok, 260))
    not one merge of two lower-ranked tokens: merging its bytes by the ranks below its own ends in 3 parts; tiktoken gives it only for a piece that is this token whole
    >>> not_one_merge(tok, 259) is None
    True
    """
    if not tok.made_whole(token_id):
        return None
    rank = tok.merge_rank(token_id)
    assert rank is not None  # made_whole holds for merged tokens only
    parts = len(tok.truncate(rank).encode_bytes(tok.token_bytes(token_id)))
    own = encode_own_text(tok, token_id)
    fate = (
        "tiktoken gives it only for a piece that is this token whole"
        if own == (token_id,)
        else f"tiktoken never gives it (its own text encodes as {len(own)} tokens)"
    )
    return f"not one merge of two lower-ranked tokens: merging its bytes by the ranks below its own ends in {parts} parts; {fate}"


def walk(tree: Lineage) -> Iterator[Lineage]:
    """Every node of a lineage tree, parents before children, left before right.

    >>> from explorer import make_config, train
    >>> tok = train("low " * 5, make_config("sennrich", num_merges=2)).tokenizer()
    >>> [n.token for n in walk(lineage(tok, tok.token_to_id("low")))]
    ['low', 'lo', 'l', 'o', 'w']
    """
    stack = [tree]
    while stack:
        node = stack.pop()
        yield node
        if node.right is not None:
            stack.append(node.right)
        if node.left is not None:
            stack.append(node.left)


def token_surface(tok: Tokenizer, token_id: int) -> str:
    """The text a token stands for in running text: bytes decoded (an incomplete UTF-8
    character dropped), word markers removed.

    >>> from explorer import make_config, train
    >>> tok = train("low " * 5, make_config("sennrich", num_merges=3)).tokenizer()
    >>> token_surface(tok, tok.token_to_id("low</w>"))
    'low'
    """
    if tok.pipeline.unit == "byte" and not tok.is_special(token_id):
        return tok.token_bytes(token_id).decode("utf-8", errors="ignore")
    return strip_markers(tok.id_to_token(token_id), tok.pipeline.marker).strip(" ")


class KeywordInContext(NamedTuple):
    line: int  # 1-based line number in the texts as given (counted across texts)
    left: str
    match: str
    right: str


def keyword_in_context(
    tok: Tokenizer, texts: Iterable[str], token_id: int, *, limit: int = 5, width: int = 40, max_lines: int = 200_000
) -> list[KeywordInContext]:
    """Lines where a token really occurs as a token when the line is encoded (not merely as a
    substring), with ``width`` characters of context each side.

    >>> from explorer import make_config, train
    >>> text = "the lowest low\\nslow and lower\\nblow"
    >>> tok = train(text, make_config("sennrich", num_merges=4)).tokenizer()
    >>> [(k.line, k.left, k.match, k.right) for k in keyword_in_context(tok, [text], tok.token_to_id("low</w>"))]
    [(1, 'the lowest ', 'low', ''), (2, 's', 'low', ' and lower'), (3, 'b', 'low', '')]
    """
    surface = token_surface(tok, token_id)
    if not surface:
        return []
    out: list[KeywordInContext] = []
    number = 0
    for text in texts:
        for line in text.splitlines():
            number += 1
            if number > max_lines:
                return out
            at = line.find(surface)
            if at < 0 or token_id not in tok.encode(line):
                continue
            # the first occurrence of the surface text that is cut as this token
            while at >= 0:
                found = _token_at(tok, line, token_id, at, len(surface))
                if found:
                    break
                at = line.find(surface, at + 1)
            if at < 0:
                at = line.find(surface)
            end = at + len(surface)
            out.append(KeywordInContext(number, line[max(0, at - width) : at], line[at:end], line[end : end + width]))
            if len(out) >= limit:
                return out
    return out


def _token_at(tok: Tokenizer, line: str, token_id: int, start: int, length: int) -> bool:
    """Whether the piece covering line[start:start+length] holds the token there."""
    for piece in tok.encode_pieces(line):
        if piece.start <= start and start + length <= piece.end:
            return token_id in piece.ids
    return False

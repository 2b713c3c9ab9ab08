"""Formats: save and load what training produced.

``trace.json`` is the project's own format and the CLI's contract. Version 2 holds a tokenizer
as its parts — "pipeline" (the stages), "vocab" (with the top-level "merges"), "encoding" — and
what training decided, "training"; it keeps every key of version 1 (a flat "config", "alphabet",
"special_tokens", "merges"), which outside checks read::

    {
      "format": "bpe-explorer-trace", "version": 2,
      "pipeline": {"normalizer": "none", "pretokenizer": "gpt2", "pattern": null, "sequences": "text",
                   "unit": "byte", "marker": "none"},
      "vocab": {"special_tokens": ["<|endoftext|>"], "alphabet": [...], "reuse_ids": true},
      "training": {...TrainerConfig's own fields: alphabet, tie_break, vocab_size, num_merges...},
      "config": {...pipeline + training, flat (version 1)...},
      "encoding": {"unk_token": "<unk>", "dropout_style": "retry"},
      "top_k": 20,
      "special_tokens": ["<|endoftext|>"],
      "alphabet": ["!", "\\"", ...],            # display strings, in id order after the specials
      "initial_tokens": 1115394, "stop_reason": "vocab_size",
      "merges": [{"step": 1, "left": "Ġ", "right": "t", "left_id": 94, "right_id": 84,
                  "token": "Ġt", "id": 256, "count": 31072, "replaced": 31072,
                  "tokens_after": 1084322, "reused": false, "n_tied": 0, "ties": [],
                  "words_affected": 3054}, ...]
    }

A PickyBPE trace (``TrainerConfig(picky=τ)``: "training" and "config" carry ``"picky": τ``) adds
the tokens it removed, in the order removed: top-level ``"removals"``, ``[[after, id], ...]``
(id removed right after merge number ``after``), and in each merge followed by removals the
details a reader shows::

      "merges": [..., {"step": 812, ..., "removals": [{"id": 4417, "token": "entucky",
                  "parts": [2023, 88], "part_tokens": ["ent", "ucky"], "alone": 2, "inside": 412,
                  "tokens_after": 901733, "words_affected": 2}]}, ...],
      "removals": [[812, 4417], ...]

Both are left out when nothing was removed, so every other trace stays as it was. A loaded
trace's removals are checked as its merges are: the pairs the encoder replays come from the
top-level list, and each merge's "removals", when present, must name the same ids and parts.

Merges are the source of truth: a loaded tokenizer re-derives every id and checks it against
the file; a version 2 file whose "pipeline" or "vocab" disagrees with its "config" or "alphabet"
is refused. Version 1 files (no "pipeline", "vocab", "training") load from "config" and
"alphabet". A tokenizer that was not trained here (imported, or a bundled table) has a trace too:
no "training", its merges without counts, and, when it has them, ``"special_ids"`` (special tokens with ids past
the vocabulary, name -> id), ``"empty_ids"`` (a rank table's empty token: ids that stand for no bytes,
Whisper's 50256), ``"rules": "tiktoken"``, and ``"file_ids"`` (the id the file it was read from gives each
derived id, for a vocabulary numbered in SentencePiece's order: Llama 2's). :mod:`explorer.formats.exporters` writes the
formats other tools read, :mod:`explorer.formats.importers` reads them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..bpe.config import EncodeOptions, TrainerConfig
from ..bpe.parity import ParityStep, ParityTrainer
from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import RemovalRecord, StepRecord, Trainer
from ..bpe.vocab import Vocab
from ..errors import ConfigError, FormatError
from ..stages.pipeline import Pipeline

__all__ = [
    "TRACE_FILE",
    "TRACE_FORMAT",
    "TRACE_VERSION",
    "trace_dict",
    "balanced_trace_dict",
    "trace_from_tokenizer",
    "write_trace",
    "save_trace",
    "tokenizer_from_trace",
    "load_tokenizer",
    "load_trace",
]

TRACE_FORMAT = "bpe-explorer-trace"
TRACE_FILE = "trace.json"
TRACE_VERSION = 2


def _merge_head(r: StepRecord | ParityStep, *, replaced: int, tokens_after: int) -> dict:
    """The keys every merge of a trace has, from a trainer's record of it."""
    return {
        "step": r.step,
        "left": r.left,
        "right": r.right,
        "left_id": r.left_id,
        "right_id": r.right_id,
        "token": r.token,
        "id": r.token_id,
        "count": r.count,
        "replaced": replaced,
        "tokens_after": tokens_after,
    }


def _record_dict(r: StepRecord) -> dict:
    out = {
        **_merge_head(r, replaced=r.replaced, tokens_after=r.tokens_after),
        "reused": r.reused,
        "n_tied": r.n_tied,
        "ties": [list(t) for t in r.ties],
        "words_affected": r.words_affected,
    }
    if r.removals:  # PickyBPE only: other merges keep their keys as they were
        out["removals"] = [_removal_dict(rm) for rm in r.removals]
    return out


def _removal_dict(rm: RemovalRecord) -> dict:
    return {
        **_removal_head(rm.token_id, rm.token, rm.parts, rm.part_tokens),
        "alone": rm.alone,
        "inside": rm.inside,
        "tokens_after": rm.tokens_after,
        "words_affected": rm.words_affected,
    }


def _removal_head(token_id: int, token: str, parts: Sequence[int], part_tokens: Sequence[str]) -> dict:
    """The keys every removal of a trace has (a merge's "removals" entries).

    >>> _removal_head(5, "ab", (2, 3), ("a", "b"))
    {'id': 5, 'token': 'ab', 'parts': [2, 3], 'part_tokens': ['a', 'b']}
    """
    return {"id": token_id, "token": token, "parts": list(parts), "part_tokens": list(part_tokens)}


def _with_removals(data: dict, removals: Sequence[tuple[int, int]]) -> dict:
    """The trace with its top-level "removals" when it has any (else as it was)."""
    if removals:
        data["removals"] = [list(r) for r in removals]
    return data


def trace_dict(trainer: Trainer, *, steps: int | None = None) -> dict:
    """The trainer's state as a JSON-ready dict (the ``trace.json`` layout); ``steps``: as of
    that step (the tokenizer a page shows at step k)."""
    records = trainer.records if steps is None else trainer.records[: max(0, steps)]
    finished = steps is None or steps >= len(trainer.records)
    data = {
        **_trained_head(trainer, initial_tokens=trainer.initial_tokens),
        "stop_reason": trainer.stop_reason if finished else None,
        "merges": [_record_dict(r) for r in records],
    }
    return _with_removals(data, [r for r in trainer.removals if r[0] <= len(records)])


def _trained_head(trainer: Trainer | ParityTrainer, *, initial_tokens: int) -> dict:
    """A trained tokenizer's trace up to its stop reason: its parts, its config, its alphabet."""
    config = trainer.config
    vocab = Vocab(config.special_tokens, tuple(trainer.alphabet), reuse_ids=config.reuse_ids)
    return {
        **_parts(config.pipeline, vocab),
        "training": config.training_dict(),
        "config": config.to_dict(),
        "encoding": trainer.encoding.to_dict(),
        "top_k": trainer.top_k,
        "special_tokens": list(config.special_tokens),
        "alphabet": list(trainer.alphabet),
        "initial_tokens": initial_tokens,
    }


def balanced_trace_dict(trainer: ParityTrainer) -> dict:
    """The ``trace.json`` of training over several languages: every key of ``trace_dict`` (a
    reader of a classical trace finds what it reads; "initial_tokens" and "tokens_after" count
    all training texts together) plus what the balance did::

        "balance": {"mode": "parity", "global_merges": 0, "window": 100, "window_alpha": 2.0,
                    "languages": ["en.txt", "hi.txt"], "initial_dev_tokens": [1427, 1540],
                    "initial_train_tokens": [7834, 8363]},
        "merges": [{...as trace_dict's, without ties..., "language": "hi.txt", "rule": "worst",
                    "dev_tokens": [1427, 1398], "train_tokens": [7834, 8180]}, ...]

    "language" is null (and "rule" "global") for a merge chosen over all languages together.

    >>> from explorer import Balance, ParityTrainer, TrainerConfig
    >>> cfg = TrainerConfig(pretokenizer="whitespace", unit="char", vocab_size=None, num_merges=1)
    >>> t = ParityTrainer(["aa aa", "bcd"], ["aa", "bcd"], cfg, names=["x.txt", "y.txt"]).run()
    >>> m = balanced_trace_dict(t)["merges"][0]
    >>> m["token"], m["language"], m["rule"], m["count"], m["tokens_after"], m["dev_tokens"], m["train_tokens"]
    ('bc', 'y.txt', 'worst', 1, 6, [2, 2], [4, 2])
    """
    balance = trainer.balance
    before = sum(trainer.initial_train_tokens)
    merges = []
    for r in trainer.records:
        after = sum(r.train_tokens)
        merges.append(_step_dict(r, trainer.languages, replaced=before - after, tokens_after=after))
        before = after
    return {
        **_trained_head(trainer, initial_tokens=sum(trainer.initial_train_tokens)),
        "stop_reason": trainer.stop_reason,
        "balance": {
            "mode": balance.mode,
            "global_merges": balance.global_merges,
            "window": balance.window,
            "window_alpha": balance.window_alpha,
            "languages": list(trainer.languages),
            "initial_dev_tokens": list(trainer.initial_dev_tokens),
            "initial_train_tokens": list(trainer.initial_train_tokens),
        },
        "merges": merges,
    }


def _step_dict(r: ParityStep, languages: tuple[str, ...], *, replaced: int, tokens_after: int) -> dict:
    return {
        **_merge_head(r, replaced=replaced, tokens_after=tokens_after),
        "language": None if r.served is None else languages[r.served],
        "rule": r.rule,
        "dev_tokens": list(r.dev_tokens),
        "train_tokens": list(r.train_tokens),
    }


def _parts(pipeline: Pipeline, vocab: Vocab) -> dict:
    """A trace's head: its format, version, pipeline and vocab (the merges go apart)."""
    return {"format": TRACE_FORMAT, "version": TRACE_VERSION, "pipeline": pipeline.to_dict(), "vocab": vocab.to_dict()}


def trace_from_tokenizer(tok: Tokenizer) -> dict:
    """A trace for a tokenizer without a training history (imported, or a bundled table): its
    merges with the ids and tokens they make, no counts.

    >>> from explorer import make_config, train
    >>> trace_from_tokenizer(train("aaa", make_config("bytes", num_merges=1)).tokenizer())["merges"]
    [{'step': 1, 'left': 'a', 'right': 'a', 'left_id': 97, 'right_id': 97, 'token': 'aa', 'id': 256}]

    PickyBPE's removals come with it, without their counts:

    >>> picky = Tokenizer(pipeline=make_config("bytes").pipeline, vocab=Vocab(alphabet=("a", "b", "c"),
    ...                   merges=((0, 1), (3, 2)), removals=((2, 3),)))
    >>> data = trace_from_tokenizer(picky)
    >>> data["merges"][1]["removals"], data["removals"]
    ([{'id': 3, 'token': 'ab', 'parts': [0, 1], 'part_tokens': ['a', 'b']}], [[2, 3]])
    """
    vocab = tok.vocab
    # merge number -> the removals right after it, as a merge's "removals" entries
    removed_after = {
        after: [_removal_head(token, vocab[token], parts, [vocab[p] for p in parts]) for token, parts in made]
        for after, made in _removals_by_merge(vocab).items()
    }
    data = {
        **_parts(tok.pipeline, tok.vocab),
        "config": tok.config.to_dict(),
        "encoding": tok.encoding.to_dict(),
        "special_tokens": list(tok.vocab.special_tokens),
        "alphabet": list(tok.alphabet),
        "merges": [
            {
                "step": k,
                "left": tok.vocab[a],
                "right": tok.vocab[b],
                "left_id": a,
                "right_id": b,
                "token": tok.vocab[n],
                "id": n,
                **({"removals": removed_after[k]} if k in removed_after else {}),
            }
            for k, ((a, b), n) in enumerate(zip(tok.merges, tok.merged_ids), 1)
        ],
    }
    _with_removals(data, vocab.removals)
    trailing = {t: i for t, i in tok.special_ids.items() if i >= len(tok.vocab)}
    if trailing:
        data["special_ids"] = trailing
    if tok.blank_ids:
        data["empty_ids"] = sorted(tok.blank_ids)
    if tok.rules != "merges":
        data["rules"] = tok.rules
    if tok.file_ids is not None:  # the ids of the file it was read from, by derived id
        data["file_ids"] = list(tok.file_ids.shown)
    if tok.pair_rules is not None:
        # a tokenizer.json's own merge list (transformers' tiktoken converter): the pairs in
        # their order, which "merges" (one per token, in making order) only derive the ids of
        data["merge_list"] = [list(pair) for pair in sorted(tok.pair_rules, key=tok.pair_rules.__getitem__)]
    return data


def _merge_list(value: object, vocab: Vocab) -> dict[tuple[int, int], tuple[int, int]]:
    """The top-level "merge_list" as ``Tokenizer``'s ``pair_rules``: each pair at its place,
    merging into the token its two tokens make; else FormatError.

    >>> v = Vocab(alphabet=("a", "b", "c"), merges=((1, 2), (0, 3)))
    >>> _merge_list([[0, 3], [1, 2]], v)
    {(0, 3): (0, 4), (1, 2): (1, 3)}
    >>> _merge_list([[0, 1]], v)
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: the trace's 'merge_list' item 0 joins 'a' and 'b' into 'ab', which is no token
    """
    if not isinstance(value, list):
        raise FormatError("the trace's 'merge_list' must be a list of [left id, right id] pairs")
    rules: dict[tuple[int, int], tuple[int, int]] = {}
    pair: object
    for n, pair in enumerate(value):
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < len(vocab) for i in pair)
        ):
            raise FormatError(f"the trace's 'merge_list' item {n} is not a pair of token ids: {pair!r}")
        left, right = pair
        a, b = vocab[left], vocab[right]
        made = vocab.id(a + b)
        if made is None:
            raise FormatError(
                f"the trace's 'merge_list' item {n} joins {a!r} and {b!r} into {a + b!r}, which is no token"
            )
        rules.setdefault((left, right), (n, made))  # a pair listed twice keeps its first place
    return rules


def write_trace(trainer: Trainer, out_dir: str | Path) -> Path:
    """Write ``out_dir/trace.json`` (creating the folder) and return its path."""
    return save_trace(trace_dict(trainer), out_dir)


def save_trace(data: dict, out_dir: str | Path) -> Path:
    """Write a trace (``trace_dict`` or ``trace_from_tokenizer``) as ``out_dir/trace.json``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / TRACE_FILE
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def _require(cond: bool, message: str) -> None:
    if not cond:
        raise FormatError(message)


def tokenizer_from_trace(data: object) -> Tokenizer:
    """Rebuild a Tokenizer from a parsed trace, checking every derived id against the file."""
    _require(
        isinstance(data, dict) and data.get("format") == TRACE_FORMAT, "not a BPE Explorer trace (no 'format' field)"
    )
    assert isinstance(data, dict)
    _require(isinstance(data.get("config"), dict), "the trace has no 'config' object")
    _require(
        isinstance(data.get("alphabet"), list) and all(isinstance(s, str) for s in data["alphabet"]),
        "the trace's 'alphabet' must be a list of strings",
    )
    merges = data.get("merges")
    _require(isinstance(merges, list), "the trace's 'merges' must be a list")
    assert isinstance(merges, list)
    try:
        config = TrainerConfig.from_dict(data["config"])
        # older traces kept the encoding options inside "config"
        encoding = EncodeOptions.from_dict(data["encoding"] if "encoding" in data else data["config"])
    except (ConfigError, TypeError, AttributeError) as err:
        raise FormatError(f"the trace's config is invalid: {err}") from None
    pipeline = config.pipeline
    vocab = {"special_tokens": list(config.special_tokens), "alphabet": data["alphabet"], "reuse_ids": config.reuse_ids}
    if "pipeline" in data:  # version 2: its parts must say what its version 1 keys say
        _agrees(data, "pipeline", pipeline.to_dict(), "'config'")
        _agrees(data, "vocab", vocab, "'config' and 'alphabet'")
    pairs = []
    for i, m in enumerate(merges):
        _require(isinstance(m, dict), f"merge {i + 1} is not an object")
        _require(
            all(isinstance(m.get(k), int) and not isinstance(m.get(k), bool) for k in ("left_id", "right_id", "id")),
            f"merge {i + 1} needs integer 'left_id', 'right_id' and 'id'",
        )
        pairs.append((m["left_id"], m["right_id"]))
    special_ids = data.get("special_ids", {})
    _require(
        isinstance(special_ids, dict) and all(isinstance(i, int) for i in special_ids.values()),
        "the trace's 'special_ids' must map special tokens to integer ids",
    )
    empty_ids = data.get("empty_ids", [])
    _require(
        isinstance(empty_ids, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in empty_ids),
        "the trace's 'empty_ids' must be a list of integer ids",
    )
    rules = data.get("rules", "merges")
    removals = _removal_pairs(data.get("removals", []))
    try:
        built = Vocab(config.special_tokens, tuple(data["alphabet"]), tuple(pairs), config.reuse_ids, removals)
        tok = Tokenizer(
            pipeline=config.tokenizer_pipeline(len(pairs)),  # SuperBPE's superwords past its transition
            vocab=built,
            encoding=encoding,
            special_ids=special_ids,
            blank_ids=empty_ids,
            rules=rules,
            pair_rules=_merge_list(data["merge_list"], built) if "merge_list" in data else None,
            file_ids=_file_ids(data.get("file_ids"), len(built)),
        )
    except ValueError as err:
        what = "merges and removals" if removals else "merges"
        raise FormatError(f"the trace's {what} are inconsistent: {err}") from None
    except ConfigError as err:
        raise FormatError(f"the trace's config is invalid: {err}") from None
    for i, (m, new_id) in enumerate(zip(merges, tok.merged_ids)):
        _require(m["id"] == new_id, f"merge {i + 1} says id {m['id']} but its pair derives id {new_id}")
        if "token" in m:
            _require(
                m["token"] == tok.vocab[new_id],
                f"merge {i + 1} says token {m['token']!r} but derives {tok.vocab[new_id]!r}",
            )
    _removals_agree(merges, tok.vocab)
    return tok


def _file_ids(value: object, n: int) -> list[int] | None:
    """The top-level "file_ids" (the file's id of each derived id), or FormatError.

    >>> _file_ids([2, 0, 1], 3), _file_ids(None, 3)
    ([2, 0, 1], None)
    >>> _file_ids([0, 0], 2)
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: the trace's 'file_ids' must give each of its 2 tokens its own id, a whole number
    """
    if value is None:
        return None
    _require(
        isinstance(value, list)
        and len(value) == n
        and len(set(value)) == n
        and all(type(i) is int and i >= 0 for i in value),
        f"the trace's 'file_ids' must give each of its {n:,} tokens its own id, a whole number",
    )
    assert isinstance(value, list)
    return value


def _removals_by_merge(vocab: Vocab) -> dict[int, list[tuple[int, tuple[int, ...]]]]:
    """Merge number -> the (id, parts) removed right after it, in the order removed.

    >>> _removals_by_merge(Vocab(alphabet=("a", "b", "c"), merges=((0, 1), (3, 2)), removals=((2, 3),)))
    {2: [(3, (0, 1))]}
    """
    out: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
    for (after, token), parts in zip(vocab.removals, vocab.removal_parts):
        out.setdefault(after, []).append((token, parts))
    return out


def _removal_pairs(value: object) -> tuple[tuple[int, int], ...]:
    """The top-level "removals" as (after, id) pairs, or FormatError saying what is wrong with
    its form (whether training can have made them is ``Vocab``'s check).

    >>> _removal_pairs([[3, 260], [3, 261]])
    ((3, 260), (3, 261))
    >>> _removal_pairs([[3, "ab"]])
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: the trace's 'removals' must be a list of [after merge, id] pairs of integers; item 0 is [3, 'ab']
    """
    _require(isinstance(value, list), "the trace's 'removals' must be a list of [after merge, id] pairs of integers")
    assert isinstance(value, list)
    for i, item in enumerate(value):
        _require(
            isinstance(item, list) and len(item) == 2 and all(type(x) is int for x in item),
            f"the trace's 'removals' must be a list of [after merge, id] pairs of integers; item {i} is {item!r}",
        )
    return tuple((after, token) for after, token in value)


def _removals_agree(merges: list, vocab: Vocab) -> None:
    """Each merge's "removals" (a reader's details), when given, must name the removals of the
    top-level list that follow it, with the parts they derive.

    >>> v = Vocab(alphabet=("a", "b", "c"), merges=((0, 1), (3, 2)), removals=((2, 3),))
    >>> _removals_agree([{}, {"removals": [{"id": 3, "parts": [0, 1]}]}], v)
    >>> _removals_agree([{}, {"removals": [{"id": 4}]}], v)
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: merge 2's 'removals' name ids [4] but the trace's 'removals' remove [3] after it
    """
    expected = _removals_by_merge(vocab)
    for k, m in enumerate(merges, 1):
        if "removals" not in m:
            continue
        listed = m["removals"]
        _require(
            isinstance(listed, list) and all(isinstance(r, dict) for r in listed),
            f"merge {k}'s 'removals' must be a list of objects",
        )
        made = expected.get(k, [])
        ids = [r.get("id") for r in listed]
        _require(
            ids == [token for token, _ in made],
            f"merge {k}'s 'removals' name ids {ids} but the trace's 'removals' remove {[t for t, _ in made]} after it",
        )
        for r, (token, parts) in zip(listed, made):
            _require(
                "parts" not in r or r["parts"] == list(parts),
                f"merge {k}'s removal of id {token} says parts {r['parts']!r} but derives {list(parts)}",
            )


def _agrees(data: dict, key: str, expected: dict, where: str) -> None:
    """FormatError unless ``data[key]`` says ``expected`` (what the version 1 keys, ``where``, say).

    >>> _agrees({"pipeline": {"unit": "char"}}, "pipeline", {"unit": "byte"}, "'config'")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: the trace's 'pipeline' disagrees with its 'config': unit 'char' against 'byte'
    >>> _agrees({"pipeline": {"unit": "char"}}, "vocab", {"reuse_ids": True}, "'config'")
    Traceback (most recent call last):
    ...
    explorer.errors.FormatError: the trace's 'vocab' must be an object
    """
    given = data.get(key)  # a version 2 trace may have lost one of its parts
    _require(isinstance(given, dict), f"the trace's {key!r} must be an object")
    assert isinstance(given, dict)
    for name, value in expected.items():
        _require(
            given.get(name) == value,
            f"the trace's {key!r} disagrees with its {where}: {name} {given.get(name)!r} against {value!r}",
        )


def load_trace(path: str | Path) -> tuple[Tokenizer, dict]:
    """(tokenizer, parsed trace) from a folder holding ``trace.json`` (or from the file itself)."""
    p = Path(path)
    if p.is_dir():
        p = p / TRACE_FILE
    try:
        raw = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FormatError(f"no {TRACE_FILE} found at {path}") from None
    except (OSError, UnicodeDecodeError) as err:
        raise FormatError(f"cannot read {p}: {err}") from None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise FormatError(f"{p.name} is not valid JSON: {err}") from None
    return tokenizer_from_trace(data), data


def load_tokenizer(path: str | Path) -> Tokenizer:
    """Load a tokenizer from a folder holding ``trace.json`` (or from the file itself)."""
    return load_trace(path)[0]

"""The session's tokenizers in one catalog, under one key scheme: the session's trainer as of a
merge, the bundled tables and the tokenizers imported from files. The Playground's picker, the
Compare page's one pretrained tokenizer, the Train page's download and every link name a
tokenizer by its key; a view reads the tokenizer with :func:`get` and shows the key to a user
with :func:`label`. No view keeps tokenizers of its own.

A key::

    key      = trained | bundled | imported
    trained  = "trained" [ "@" k ]             the session's trainer as of merge k (k = 0..200,000);
                                               without k, as of the merge the page shows
    bundled  = table [ "@" k ]                 a table rewound to its merge k (its first 256 + k ranks)
    table    = "gpt2" | "cl100k_base" | "o200k_base"      as the CLI names them (formats.pretrained)
    imported = "imported:" sha256 [ ":" pre-tokenizer ] [ "@" k ]
                                               sha256: 64 lowercase hex, of the files as the store
                                               keeps them (one file as it is, several as one zip of
                                               them); the pre-tokenizer chosen for files that hold
                                               none (vocab.json + merges.txt, a lone .tiktoken); k:
                                               rewound to the file's merge k

    trained    trained@120    gpt2    cl100k_base@5000    imported:3f2a…(64 hex)    imported:3f2a…(64 hex):cl100k@300

A table or an import without k is the whole of it; with k it is ``Tokenizer.truncate(k)``, made
once per server for each (key, k) and kept for a few of them (:func:`get`). A rank table whose
tokens are not all merges of two lower ones (Llama 3's) rewound to k keeps its ranks below
256 + k, as tiktoken would given only those ranks (:func:`rewind_note`).

A key is the tokenizer's identity everywhere: in links (``tokenizers=trained,gpt2`` beside ``k=``,
``compare_tokenizer=imported:…``), in the session and in the server-wide caches (an import's key
names its content, so two sessions' "mine" with other merges never share a result). Links written
before the catalog carried these same keys, so they open as they did.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

import streamlit as st

from ..bpe.tokenizer import Tokenizer
from ..bpe.trainer import Trainer
from ..errors import ConfigError, ExplorerError
from ..formats.corpora import MAX_CORPUS_BYTES, mib
from ..formats.exporters import zip_files
from ..formats.hub import HubFiles, HubSettings, fetch_files, hub_note, hub_settings
from ..formats.importers import (
    ImportReport,
    holds_normalizer,
    import_report,
    is_zip,
    needs_pretokenizer,
    unzip_files,
)
from ..formats.pretrained import PRETRAINED
from ..stages.pretokenizers import PRETOKENIZERS
from . import data, render, server, state, storage

__all__ = [
    "Kind",
    "Key",
    "TRAINED",
    "IMPORTED",
    "MAX_IMPORTED",
    "MAX_TABLE_K",
    "parse",
    "key_of",
    "trained_key",
    "whole_key",
    "rewound_key",
    "Entry",
    "Imported",
    "keys",
    "keep_choice",
    "restore_choice",
    "label",
    "picker_help",
    "get",
    "rewind_note",
    "past_last_merge",
    "imported",
    "add_import",
    "add_hub",
    "restore",
    "forget_imports",
    "default_name",
]

Kind = Literal["trained", "bundled", "imported"]
TRAINED = "trained"
IMPORTED = "imported:"
OPTIONS = "import-options.json"  # the member of a stored import that holds what was chosen for it
MAX_IMPORTED = 3  # an imported o200k_base holds 200,000 merges: a session keeps a few at most
_MAX_K = 200_000  # the furthest step a link may name (links.count_param's bound)
MAX_TABLE_K = 9_999_999  # a table's or an import's merge k: seven digits, at most its own merges
_IMPORTS = "imported_tokenizers"  # session: {key: Imported}, oldest first


# ---- keys ----------------------------------------------------------------------------------
class Key(NamedTuple):
    """A key read into its parts."""

    kind: Kind
    name: str  # "trained", the bundled table's name, or the imported files' sha256
    k: int | None = None  # trained: the merge (None: the one the page shows); else rewound to it (None: whole)
    pretokenizer: str | None = None  # imported: the choice for files that hold none


def parse(key: str) -> Key | None:
    """A key's parts, or None when it is no key (see the grammar above).

    >>> parse("trained"), parse("trained@12"), parse("gpt2")
    (Key(kind='trained', name='trained', k=None, pretokenizer=None), Key(kind='trained', name='trained', k=12, pretokenizer=None), Key(kind='bundled', name='gpt2', k=None, pretokenizer=None))
    >>> parse("imported:" + "ab" * 32 + ":cl100k")[::3]
    ('imported', 'cl100k')
    >>> [parse(bad) for bad in ("gpt9", "trained@", "trained@-1", "trained@1e3", "imported:../x", "imported:" + "ab" * 32 + ":x")]
    [None, None, None, None, None, None]
    >>> parse("cl100k_base@5000"), parse("imported:" + "ab" * 32 + ":cl100k@30")[2:]
    (Key(kind='bundled', name='cl100k_base', k=5000, pretokenizer=None), (30, 'cl100k'))
    >>> [parse(bad) for bad in ("gpt2@", "gpt2@x", "gpt2@12345678", "gpt9@5", "imported:" + "ab" * 32 + "@1@2")]
    [None, None, None, None, None]
    """
    if key == TRAINED:
        return Key("trained", TRAINED)
    head, at, k = key.partition("@")
    if not at:
        return _whole_parts(key)
    merge = _merge_k(k, high=_MAX_K if head == TRAINED else MAX_TABLE_K)
    if merge is None:
        return None
    if head == TRAINED:
        return Key("trained", TRAINED, merge)
    parts = _whole_parts(head)
    return None if parts is None else parts._replace(k=merge)


def _merge_k(text: str, *, high: int) -> int | None:
    """The merge k after a key's "@", or None when it is no whole number from 0 to ``high``.

    >>> _merge_k("120", high=200), _merge_k("0", high=200), _merge_k("201", high=200), _merge_k("-1", high=200)
    (120, 0, None, None)
    """
    ok = text.isascii() and text.isdigit() and len(text) <= 7 and int(text) <= high
    return int(text) if ok else None


def _whole_parts(key: str) -> Key | None:
    """A bundled table's or an import's key without k, read into its parts (None: no such key)."""
    if key in PRETRAINED:
        return Key("bundled", key)
    if key.startswith(IMPORTED):
        digest, _, choice = key.removeprefix(IMPORTED).partition(":")
        if storage.is_digest(digest) and (not choice or choice in PRETOKENIZERS):
            return Key("imported", digest, pretokenizer=choice or None)
    return None


def key_of(parts: Key) -> str:
    """The key of these parts (:func:`parse` read backwards).

    >>> keys = ["trained", "trained@12", "o200k_base", "gpt2@0", "imported:" + "ab" * 32, "imported:" + "ab" * 32 + ":none@7"]
    >>> [key_of(parse(k)) for k in keys] == keys
    True
    """
    at = "" if parts.k is None else f"@{parts.k}"
    if parts.kind == "trained":
        return TRAINED + at
    if parts.kind == "bundled":
        return parts.name + at
    return IMPORTED + parts.name + (f":{parts.pretokenizer}" if parts.pretokenizer else "") + at


def trained_key(k: int | None = None) -> str:
    """The session's trainer as of merge k (None: as of the merge the page shows).

    >>> trained_key(30), trained_key()
    ('trained@30', 'trained')
    """
    return key_of(Key("trained", TRAINED, k))


def whole_key(key: str) -> str:
    """A table's or an import's key without its merge k (the key itself when it has none, or
    names the session's trainer or nothing).

    >>> whole_key("cl100k_base@5000"), whole_key("gpt2"), whole_key("trained@3"), whole_key("gpt9@1")
    ('cl100k_base', 'gpt2', 'trained@3', 'gpt9@1')
    """
    parts = parse(key)
    if parts is None or parts.kind == "trained":
        return key
    return key_of(parts._replace(k=None))


def rewound_key(key: str, k: int | None) -> str:
    """A table's or an import's key rewound to its merge k (None: the whole of it).

    >>> rewound_key("cl100k_base", 5000), rewound_key("gpt2@10", None)
    ('cl100k_base@5000', 'gpt2')
    """
    parts = parse(key)
    if parts is None or parts.kind == "trained":
        raise ConfigError(f"{key[:90]!r} is no table or import to rewind")
    return key_of(parts._replace(k=k))


# ---- what a key holds ------------------------------------------------------------------------
@dataclass(frozen=True)
class Imported:
    """A tokenizer read from files, as the session keeps it. ``digest`` is the SHA-256 of the
    files as stored; with the pre-tokenizer chosen for files that hold none it makes the key,
    never the name (a name is what the user called it)."""

    name: str
    format: str
    tokenizer: Tokenizer
    digest: str
    pretokenizer: str | None = None  # the choice, only for files that hold no pre-tokenizer
    notes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return key_of(Key("imported", self.digest, pretokenizer=self.pretokenizer))

    @property
    def label(self) -> str:
        return self.label_at(None)

    def label_at(self, k: int | None) -> str:
        """The import's label, rewound to its merge k (None: whole)."""
        return f"imported: {self.name} ({self.format}" + ("" if k is None else f", merge {k:,}") + ")"


@dataclass(frozen=True)
class Entry:
    """A tokenizer of the catalog as views read it: its key, how it is shown (:func:`label`, and
    its short form for a table's row), the tokenizer and, for the session's trainer, the trainer
    (rank r of its merges was learned at step r + 1) and the texts it learned from."""

    key: str
    kind: Kind
    label: str
    short: str
    tokenizer: Tokenizer
    trainer: Trainer | None = None
    corpus: tuple[str, ...] = ()


def imported() -> dict[str, Imported]:
    """The session's imported tokenizers by key, oldest first."""
    return st.session_state.setdefault(_IMPORTS, {})


def keys(*, trained: bool = True) -> list[str]:
    """What a picker offers: the session's trainer (unless ``trained=False``), the bundled
    tables, then the session's imports, oldest first."""
    return [*([TRAINED] if trained else []), *PRETRAINED, *imported()]


def keep_choice(widget: str, options: list[str], default: str) -> None:
    """A picker's value made one of its options before it is drawn: an import let go (a newer
    one took its place, or the Corpus page removed the files) falls back to ``default``."""
    if st.session_state.get(widget, default) not in options:
        st.session_state[widget] = default


def restore_choice(named: str, options: Callable[[], list[str]]) -> str:
    """What a link names for a picker of ``options()`` (a page's own choices beside the
    catalog's keys, asked again once an import is read back), made ready: an import read back
    from the store (:func:`restore`). Raises ExplorerError with the sentence to show when it
    names none of them."""
    if named in options():
        return named
    key = restore(named)
    if key not in options():  # e.g. trained@k where a page has only "trained"
        raise ConfigError(f"{named[:90]!r} is not one of this picker's tokenizers")
    return key


def _live() -> state.Live | None:
    """The session's trainer if it has one already (a label never builds it)."""
    return st.session_state.get("live")


def label(key: str, *, short: bool = False) -> str:
    """How a page shows a key to a user: a bundled table by its name (short enough never to be
    cut off; :func:`picker_help` says what each is), an import by the name it was given and its
    format, the session's trainer by the merge it stands at (``short``: a few words for a row of
    a table); a table or an import rewound to merge k says so ("cl100k_base (merge 5,000)"). A
    key that names nothing of this session is shown as it is."""
    parts = parse(key)
    if parts is None:
        return key
    if parts.kind == "bundled":
        return parts.name if parts.k is None else f"{parts.name} (merge {parts.k:,})"
    if parts.kind == "imported":
        found = imported().get(whole_key(key))
        return found.label_at(parts.k) if found is not None else key
    if parts.k is None:
        return "trained" if short else "trained in this session"
    if short:
        return f"trained (merge {parts.k:,})"
    live = _live()
    return f"trained, as of merge {parts.k:,}" + (f" of {live.trained:,}" if live is not None else "")


def picker_help() -> str:
    """What each bundled tokenizer is, for a picker's help."""
    return render.choices_help({name: spec.description for name, spec in PRETRAINED.items()})


def get(key: str) -> Entry | None:
    """The tokenizer a key names in this session; None when it names none (yet): a session whose
    trainer is not built or stands short of merge k, an import let go or never made here, a
    table or an import rewound past its last merge. The trainer without k comes back under the
    key of the merge it stands at (``trained@k``)."""
    parts = parse(key)
    if parts is None:
        return None
    if parts.kind != "trained":
        return _table_entry(parts)
    live = state.live()
    k = live.view if parts.k is None else parts.k
    if live.trainer is None or k > live.trained:
        return None
    corpus = state.corpus_choice().texts()
    shown = trained_key(k)
    return Entry(shown, "trained", label(shown), label(shown, short=True), live.tokenizer(k), live.trainer, corpus)


def _table_entry(parts: Key) -> Entry | None:
    """A bundled table or an import, whole or rewound to its merge k (``get``)."""
    whole = key_of(parts._replace(k=None))
    if parts.kind == "bundled":
        tok = data.pretrained(whole)
    else:
        found = imported().get(whole)
        if found is None:
            return None
        tok = found.tokenizer
    if parts.k is not None and parts.k > tok.num_merges:
        return None
    key = key_of(parts)
    shown = label(key)
    return Entry(key, parts.kind, shown, shown, _rewound(whole, parts.k, tok))


# 50 MB for o200k_base rewound near its end: a few are kept, and a teacher stepping k back and
# forth in a class hits the same few
@st.cache_resource(show_spinner="Rewinding the tokenizer (once per server for each merge)…", max_entries=4)
def _rewound_cached(whole: str, k: int, _tok: Tokenizer) -> Tokenizer:
    """The tokenizer of ``whole`` (a key without k, naming the tokenizer's content: a table, or
    an import's files and choice) as of its merge k; shared read-only by every session."""
    return _tok.truncate(k)


def _rewound(whole: str, k: int | None, tok: Tokenizer) -> Tokenizer:
    """``tok`` as of its merge k; itself when k is None or its last merge (nothing is copied)."""
    return tok if k is None or k == tok.num_merges else _rewound_cached(whole, k, tok)


def rewind_note(entry: Entry) -> str | None:
    """What merge k means for a rewound rank table whose tokens need not all be merges (an
    imported table read with tiktoken's rules; the bundled ones are all merges, tests check it):
    a sentence, or None when there is nothing to say."""
    parts = parse(entry.key)
    tok = entry.tokenizer
    if parts is None or parts.k is None or tok.rules != "tiktoken" or tok.own_merges_suffice:
        return None
    return (
        f"{entry.label} is a rank table: as of merge {parts.k:,} it keeps its {len(tok):,} tokens of lowest "
        "rank and encodes as tiktoken does given only those ranks. A table's token need not be one merge of two "
        "lower-ranked tokens (678 of Llama 3's are not: Why this split says which); such a token stays one that "
        "only a piece that is the whole token gives, or none, so the ranks kept are not always merges built one "
        "on another"
    )


# ---- imports -------------------------------------------------------------------------------
def default_name(names: list[str]) -> str:
    """A name from the uploaded files' names.

    >>> default_name(["vocab.json", "merges.txt"]), default_name(["cl100k_base.tiktoken"]), default_name([])
    ('vocab+merges', 'cl100k_base', 'tokenizer')
    """
    stems = list(dict.fromkeys(re.sub(r"\.[A-Za-z0-9]+$", "", n) for n in names))
    return "+".join(stems)[:60] or "tokenizer"


def _stored_form(files: dict[str, bytes], name: str, options: dict | None = None) -> tuple[str, bytes]:
    """(file name, bytes) as the store keeps an import: one file as it is, several as one zip
    of them (a zip among them unpacked into it: a zip inside a zip is refused on reading). The
    options chosen for files that hold none (a normalizer, subword-nmt's glossaries) go into
    the zip as one more member (``OPTIONS``), so that the same files with other options are
    another import, a link brings them back, and the key grammar stays as it is."""
    if len(files) == 1 and not options:
        return next(iter(files.items()))
    flat: dict[str, bytes] = {}
    for file_name, blob in files.items():
        flat.update(
            unzip_files(file_name, blob) if is_zip(blob) or file_name.lower().endswith(".zip") else {file_name: blob}
        )
    if options:
        flat[OPTIONS] = json.dumps(options, ensure_ascii=False, sort_keys=True).encode("utf-8")
    return f"{storage.slug(name)}.zip", zip_files(dict(sorted(flat.items())))


def _options_apart(files: dict[str, bytes]) -> tuple[dict[str, bytes], dict]:
    """Stored files and the options kept among them (``_stored_form`` read backwards), as
    ``import_report``'s keywords.

    >>> _options_apart({"t.zip": zip_files({"codes.txt": b"#version: 0.2", OPTIONS: b'{"glossaries": ["USA"]}'})})
    ({'codes.txt': b'#version: 0.2'}, {'glossaries': ('USA',), 'normalizer': None})
    """
    if len(files) != 1:
        return files, {}
    ((file_name, blob),) = files.items()
    if not is_zip(blob):
        return files, {}
    members = unzip_files(file_name, blob)
    if OPTIONS not in members:
        return files, {}
    options = json.loads(members.pop(OPTIONS).decode("utf-8"))
    glossaries = options.get("glossaries", []) if isinstance(options, dict) else None
    normalizer = options.get("normalizer") if isinstance(options, dict) else None
    if not (
        isinstance(glossaries, list)
        and all(isinstance(g, str) for g in glossaries)
        and (normalizer is None or isinstance(normalizer, str))
    ):
        raise ConfigError(f"{OPTIONS} in the stored files does not hold import options")
    return members, {"glossaries": tuple(glossaries), "normalizer": normalizer}


@st.cache_resource(show_spinner="Reading the tokenizer's files (once per server)…", max_entries=8)
def _read(digest: str, pretokenizer: str | None, _files: dict[str, bytes]) -> ImportReport:
    """One reading of stored files, shared by every session that opens them. Big files are read
    in a worker process, so that parsing them does not hold the server's interpreter (a rank
    table's merges are recovered later, where first asked for: lineage, exports, merge k)."""
    files, options = _options_apart(_files)
    if sum(map(len, files.values())) > server.WORKER_MIN_BYTES:
        return server.pool().run(import_report, files, pretokenizer=pretokenizer, **options)
    return import_report(files, pretokenizer=pretokenizer, **options)


def _keep(entry: Imported) -> list[str]:
    """Keep an import in the session (replacing one of the same name or key); the names let go."""
    kept = imported()
    for key in [k for k, e in kept.items() if e.name == entry.name or k == entry.key]:
        kept.pop(key)
    kept[entry.key] = entry
    dropped = []
    while len(kept) > MAX_IMPORTED:
        dropped.append(kept.pop(next(iter(kept))).name)
    return dropped


def _entry(name: str, digest: str, choice: str | None, report: ImportReport, extra: list[str]) -> Imported:
    return Imported(name, report.format, report.tokenizer, digest, choice, (*report.notes, *extra))


def add_import(
    files: dict[str, bytes],
    *,
    name: str = "",
    pretokenizer: str = "gpt2",
    glossaries: tuple[str, ...] = (),
    normalizer: str = "none",
    notes: tuple[str, ...] = (),
) -> tuple[Imported, list[str]]:
    """Read the files into a tokenizer, keep them in the store (so a link can name them) and the
    tokenizer in the session under ``name`` (the files' names when empty); (the import, names of
    imports let go beyond ``MAX_IMPORTED``). ``glossaries``: subword-nmt codes' words never
    split; ``normalizer``: for files that name none (ignored for the others, as
    ``pretokenizer``); ``notes``: said first among the import's notes (where the files came from).
    Raises ExplorerError (FormatError, ConfigError) with the sentence to show; the session's
    imports are then as they were."""
    total = sum(len(d) for d in files.values())
    if total > MAX_CORPUS_BYTES:
        raise ConfigError(f"the files hold {mib(total)}; the limit for uploads is {mib(MAX_CORPUS_BYTES)}")
    name = " ".join(name.split())[:60] or default_name(list(files))
    choice = pretokenizer if needs_pretokenizer(files) else None
    options: dict = {"glossaries": list(glossaries)} if glossaries else {}
    if normalizer != "none" and not holds_normalizer(files):
        options["normalizer"] = normalizer
    file_name, blob = _stored_form(files, name, options)
    digest = hashlib.sha256(blob).hexdigest()
    report = _read(digest, choice, {file_name: blob})
    extra = []
    try:
        storage.put(blob, kind="tokenizer", name=file_name, meta={"label": name})
    except ExplorerError as err:
        extra.append(f"it is used in this session but not kept on the server, so links do not name it: {err}")
    entry = _entry(name, digest, choice, report, extra)
    entry = dataclasses.replace(entry, notes=(*notes, *entry.notes))
    return entry, _keep(entry)


@st.cache_data(show_spinner="Fetching the tokenizer's files from the Hub…", ttl=600, max_entries=16)
def _hub_files(repo_id: str, revision: str | None, settings: HubSettings) -> HubFiles:
    """A Hub repository's tokenizer files, fetched once per ten minutes for every session (the
    Hub's own cache keeps them on disk; this spares its round trips). ``settings`` (the endpoint,
    cache and offline mode the environment names) keys the cache; failures are not kept."""
    return fetch_files(repo_id, revision=revision, max_bytes=MAX_CORPUS_BYTES)


def add_hub(
    repo_id: str,
    *,
    revision: str | None = None,
    name: str = "",
    pretokenizer: str = "gpt2",
    normalizer: str = "none",
) -> tuple[Imported, list[str]]:
    """A Hub repository's tokenizer (:func:`explorer.formats.hub.fetch_files`), imported as its
    files would be (:func:`add_import`), named after the repository unless ``name``. Raises
    ExplorerError with the sentence to show."""
    got = _hub_files(repo_id, revision, hub_settings())
    return add_import(
        got.files,
        name=name or got.source,
        pretokenizer=pretokenizer,
        normalizer=normalizer,
        notes=(hub_note(got),),
    )


def _restore_import(key: str, parts: Key) -> str:
    """An import a link names, read back from the store into the session; its key."""
    if key in imported():
        return key
    blob = storage.get(parts.name)
    if blob is None:
        raise ExplorerError(
            storage.gone("the imported tokenizer", parts.name, again="import it again on the Playground")
        )
    try:
        report = _read(parts.name, parts.pretokenizer, {blob.name: blob.data})
    except ExplorerError as err:
        raise ExplorerError(f"the imported tokenizer it names cannot be read: {err}") from err
    name = str(blob.meta.get("label") or default_name([blob.name]))
    entry = _entry(name, parts.name, parts.pretokenizer, report, [])
    _keep(entry)
    return entry.key


def restore(key: str) -> str:
    """A key a link names, made ready for this session (an import read back from the store);
    the key to select. Raises ConfigError (no key, or a merge k that is no whole number or past
    the tokenizer's last merge) or ExplorerError (files gone from the store, or unreadable) with
    the sentence to show."""
    parts = parse(key)
    if parts is None:
        head, at, k = key.partition("@")
        if at and head != TRAINED and _whole_parts(head) is not None:
            raise ConfigError(
                f"{label(head)[:90]}@{k[:20]}: the merge after '@' is not a whole number from 0 to {MAX_TABLE_K:,}"
            )
        if key.startswith(IMPORTED):
            raise ConfigError(f"{key[:90]!r} names no tokenizer")
        raise ConfigError(f"{key[:60]!r} is no tokenizer this app knows")
    if parts.kind == "trained":
        return key_of(parts)
    whole = key_of(parts._replace(k=None))
    if parts.kind == "imported":
        _restore_import(whole, parts)  # under the same key: its files' hash and the choice made for them
    past = past_last_merge(key)
    if past is not None:
        raise ConfigError(past)
    return key_of(parts)


def past_last_merge(key: str) -> str | None:
    """The sentence for a key that names a table or an import of this session rewound past its
    last merge; None for any other key (whole, within its merges, or naming nothing here)."""
    parts = parse(key)
    if parts is None or parts.kind == "trained" or parts.k is None:
        return None
    entry = get(whole_key(key))
    if entry is None or parts.k <= entry.tokenizer.num_merges:
        return None
    return f"{entry.label[:90]} has {entry.tokenizer.num_merges:,} merges: it cannot be rewound to merge {parts.k:,}"


def forget_imports() -> None:
    """Let go of the session's imports (their files were removed from the store)."""
    imported().clear()

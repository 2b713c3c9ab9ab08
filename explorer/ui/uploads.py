"""The session's uploaded corpus files, and how a link names a stored corpus part
(``upload:<sha256>[:decoding]``, ``pasted:<sha256>``). The Corpus page lists and adds uploads
(:mod:`explorer.ui.corpus_view`); a link that names stored files makes them the session's
uploads again (:mod:`explorer.ui.links`). Both import this module; it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ..errors import ExplorerError
from ..formats.corpora import DECODINGS, decode_bytes
from . import storage

__all__ = ["corpus_ref", "parse_corpus_ref", "Upload", "session_uploads", "unique_name", "restore_uploads"]

_UPLOADS = "upload_entries"  # {uid: Upload}, in upload order


def corpus_ref(kind: str, digest: str, decoding: str | None = None) -> str:
    """How a link names a stored corpus part.

    >>> corpus_ref("upload", "ab" * 32, "latin-1")[:15], corpus_ref("upload", "ab" * 32, "latin-1")[-8:]
    ('upload:abababab', ':latin-1')
    """
    return f"{kind}:{digest}" + (f":{decoding}" if decoding else "")


def parse_corpus_ref(ref: str) -> tuple[str, str, str | None] | None:
    """(kind, digest, decoding) of a stored part's ref, or None when it is not one.

    >>> parse_corpus_ref("pasted:" + "0" * 64)[0], parse_corpus_ref("upload:../x"), parse_corpus_ref("a.txt")
    ('pasted', None, None)
    """
    kind, _, rest = ref.partition(":")
    if kind not in ("upload", "pasted"):
        return None
    digest, _, decoding = rest.partition(":")
    if not storage.is_digest(digest) or (decoding and (kind != "upload" or decoding not in DECODINGS)):
        return None
    return kind, digest, decoding or None


@dataclass(frozen=True)
class Upload:
    """A file the session uploaded: its bytes, how to decode them (None: UTF-8 first) and its
    hash in the store (None when the store refused it: it then stays out of links)."""

    uid: int
    name: str
    raw: bytes
    decoding: str | None = None
    digest: str | None = None

    @property
    def ref(self) -> str | None:
        return None if self.digest is None else corpus_ref("upload", self.digest, self.decoding)


def session_uploads() -> dict[int, Upload]:
    """The session's uploaded files by id, in upload order."""
    return st.session_state.setdefault(_UPLOADS, {})


def unique_name(name: str, taken: set[str]) -> str:
    """A file name not yet used in the corpus ("notes.txt", then "notes (2).txt", ...).

    >>> unique_name("a.txt", {"a.txt", "a (2).txt"})
    'a (3).txt'
    """
    if name not in taken:
        return name
    stem, dot, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    n = 2
    while f"{stem} ({n}){dot}{ext}" in taken:
        n += 1
    return f"{stem} ({n}){dot}{ext}"


def restore_uploads(blobs) -> list[tuple[str, str, str | None]]:
    """Make stored files (``(Blob, decoding)`` pairs, from a link) the session's uploads, as if
    just uploaded; (name, text, ref) of those that decode (one that does not is listed with its
    choice of decoding on the Corpus page, as an upload would be)."""
    entries = session_uploads()
    entries.clear()
    taken: set[str] = set()
    out = []
    for blob, decoding in blobs:
        uid = max(entries, default=0) + 1
        name = unique_name(blob.name or "upload.txt", taken)
        taken.add(name)
        up = entries[uid] = Upload(uid, name, blob.data, decoding, blob.digest)
        if decoding:
            st.session_state[f"w_decode_{uid}"] = decoding
        try:
            text = decode_bytes(up.raw, encoding=decoding or "utf-8").text
        except ExplorerError:
            continue
        if text.strip():
            out.append((name, text, up.ref))
    return out

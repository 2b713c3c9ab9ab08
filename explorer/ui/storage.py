"""The sessions' side of the store (``explorer.serving.store``): whose files are whose, and what the
links name.

A link names a stored file by its content hash (``upload:<sha256>``); anyone holding the link
can open it, while "Forget my uploads" removes only what one browser put there. A browser is
known by a hash of Streamlit's XSRF cookie, which outlives a refresh (a new session) and a server
restart; without the cookie (AppTest, XSRF protection off) a session is its own owner. A put
also counts toward the client's network address (:func:`address`), so a fresh cookie does not
bring a fresh quota; a browser on the server's own machine has no address counted.

    owner       "b:" + 32 hex digits (a browser) or "s:" + 32 hex digits (one session)
    ref         "upload:<64 hex>[:<decoding>]" | "pasted:<64 hex>"   (a corpus part)
                "imported:<64 hex>[:<pre-tokenizer>]"                  (a tokenizer's files: a key of
                                                                       ``catalog``, whose grammar it is)
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time

import streamlit as st

from ..errors import ExplorerError
from ..serving.store import Blob, Store, default_store, recreated_notice, recreated_since

__all__ = [
    "store",
    "owner",
    "address",
    "put",
    "get",
    "gone",
    "forget_mine",
    "held_mine",
    "show_notice",
    "is_digest",
    "slug",
]

_OWNER = "store_owner"
_GENERATION = "store_generation"  # the stamp of the store this session has been using
_LOST_SAID_S = 24 * 3600.0  # a link to a file lost with the store says so for a day
_XSRF_COOKIE = "_streamlit_xsrf"
_DIGEST = re.compile(r"[0-9a-f]{64}")


def is_digest(text: str) -> bool:
    """A SHA-256 in lowercase hex, as links carry it.

    >>> is_digest("ab" * 32), is_digest("../etc/passwd"), is_digest("AB" * 32)
    (True, False, False)
    """
    return bool(_DIGEST.fullmatch(text))


def slug(text: str, limit: int = 40) -> str:
    """Names (a corpus label, an import's name) as part of a file name.

    >>> slug("english_frankenstein.txt, my notes.txt")
    'english_frankenstein+my-notes'
    """
    stems = [re.sub(r"\.(txt|md|csv|json)$", "", part.strip(), flags=re.I) for part in text.split(",")]
    name = re.sub(r"[^A-Za-z0-9_.+-]+", "-", "+".join(s for s in stems if s)).strip("-.")
    return name[:limit].rstrip("-.+") or "corpus"


def store() -> Store:
    """The process's store (one per process): SQLite, shared by every process on the machine, or
    Redis, shared by every machine naming the server (``BPE_EXPLORER_STORE``)."""
    return default_store()


def owner() -> str:
    """Who this session's puts belong to (see the module's docstring)."""
    known = st.session_state.get(_OWNER)
    if known is None:
        try:
            cookie = st.context.cookies.get(_XSRF_COOKIE)
        except Exception:  # noqa: BLE001 - no request context (bare runs, AppTest)
            cookie = None
        if isinstance(cookie, str) and cookie:
            known = "b:" + hashlib.sha256(b"bpe-explorer owner\0" + cookie.encode()).hexdigest()[:32]
        else:
            known = "s:" + secrets.token_hex(16)
        st.session_state[_OWNER] = known
    return known


def address() -> str | None:
    """The client's network address, as the server's connection sees it (behind ``python -m
    explorer serve``'s proxy: the address the proxy forwards); None on the server's own machine
    (loopback) or without a client (AppTest)."""
    try:
        found = st.context.ip_address
    except Exception:  # noqa: BLE001 - no request context (bare runs, AppTest)
        return None
    return found if isinstance(found, str) and found else None


def put(data: bytes, *, kind: str, name: str = "", meta: dict | None = None) -> str:
    """Keep ``data`` for this session's owner (counted for its address too); its SHA-256.
    Raises StoreError (quota, size) with the sentence to show."""
    return store().put(data, kind=kind, name=name, meta=meta, owner=owner(), address=address())


def get(digest: str) -> Blob | None:
    """A stored file by hash (None: never stored, or evicted to make room)."""
    return store().get(digest) if is_digest(digest) else None


def gone(what: str, digest: str, *, again: str) -> str:
    """What a link is told about a stored file that is not there (any more).

    >>> gone("the text", "ab" * 32, again="paste it again")[:44]
    'the text it names (abababababab…) is no long'
    """
    why = "the store makes room by dropping the least recently used files"
    try:
        generation = store().generation()
    except ExplorerError:
        generation = None
    if generation is not None and recreated_since(generation, seconds=_LOST_SAID_S):
        at = time.strftime("%H:%M", time.localtime(generation.created))
        why = f"the app's store was found damaged, removed or emptied and started again, empty, at {at} (server time)"
    return f"{what} it names ({digest[:12]}…) is no longer on this server ({why}); {again}"


def forget_mine() -> int:
    """Remove from the store what this browser put there (files that other browsers also put,
    or that a room holds, stay for them); the number of files removed."""
    return store().forget(owner())


def held_mine() -> list[tuple[str, list[str]]]:
    """This browser's files that live rooms hold (what :func:`forget_mine` leaves for them):
    (the file's name, the codes of the rooms holding it), by name."""
    mine = store().owned(owner())
    holders = store().holders(owner())
    return sorted(
        (entry.name or entry.digest[:12], [h.removeprefix("room:") for h in holders[entry.digest]])
        for entry in mine
        if holders.get(entry.digest)
    )


def show_notice() -> None:
    """Say once, on the page, that the store this session was using is gone (a damaged or
    deleted file recreated empty, a Redis server that lost its data): every session that saw the
    old store's generation is told, in whichever process the loss was found."""
    try:
        generation = store().generation()
    except ExplorerError:
        return
    seen = st.session_state.get(_GENERATION)
    st.session_state[_GENERATION] = generation.stamp
    if seen is not None and seen != generation.stamp:
        st.warning(recreated_notice(generation))

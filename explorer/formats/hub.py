"""Tokenizers on the Hugging Face Hub, opened by their repository id (``Qwen/Qwen2.5-7B``).

``open_hub`` lists the repository's files, picks the tokenizer's files in the order below
(:func:`choose_files`), fetches them with ``huggingface_hub.hf_hub_download`` (kept in the Hub's
own cache, so a second open reads the disk) and reads them with :func:`importers.import_report`,
as if they had been uploaded::

    tekken.json                     -> tekken (Mistral's own file; its tokenizer.json is a conversion)
    tokenizer.json                  -> hf (it names its own normalizer and pre-tokenizer)
    vocab.json + merges.txt         -> gpt2
    *.tiktoken (the first by name)  -> tiktoken ranks
    tokenizer.model                 -> tiktoken ranks or minbpe (a SentencePiece model is refused)
    original/tokenizer.model        -> as above (where Meta keeps Llama 3's ranks)

Mistral's repositories hold ``tekken.json`` beside a ``tokenizer.json`` that transformers
converted from it: the maker's own file comes first, read as ``mistral_common`` reads it.

Settings are huggingface_hub's own environment variables, read when a tokenizer is opened (not
when a module is imported): ``HF_TOKEN`` (a gated or private repository), ``HF_ENDPOINT`` (a
mirror, or a test's local server), ``HF_HUB_CACHE`` / ``HF_HOME`` (where files are kept) and
``HF_HUB_OFFLINE`` (never ask the network: read the cache alone). When the Hub cannot be reached,
the files of an earlier open are read from the cache; otherwise every failure is a ``HubError``
of one sentence naming the repository (offline, no such repository or revision, gated), a
``FormatError`` when it holds no file read here, or the importer's own ``FormatError``.
``huggingface_hub`` is imported only when a repository is opened (it takes ~1 s).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..errors import ConfigError, ExplorerError, FormatError, HubError
from ..stages.pipeline import NormalizerName
from .importers import ImportReport, import_report

__all__ = [
    "CANDIDATES",
    "HubFiles",
    "choose_files",
    "fetch_files",
    "HubSettings",
    "hub_note",
    "hub_settings",
    "is_hub_id",
    "open_hub",
]

# the file sets looked for, in order; "*.tiktoken" stands for any top-level file of that suffix
CANDIDATES: tuple[tuple[str, ...], ...] = (
    ("tekken.json",),
    ("tokenizer.json",),
    ("vocab.json", "merges.txt"),
    ("*.tiktoken",),
    ("tokenizer.model",),
    ("original/tokenizer.model",),
)
TIMEOUT = 10.0  # seconds for one answer of the Hub (huggingface_hub's own default for a file's headers)
# huggingface_hub's validate_repo_id, with the owner required: a bare name is a bundled table or a folder
_HUB_ID = re.compile(r"(?!.*(?:--|\.\.))[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?/[A-Za-z0-9_](?:[\w.-]*[A-Za-z0-9_])?")
_COMMIT = re.compile(r"[0-9a-f]{40}")


def is_hub_id(text: str) -> bool:
    """Whether ``text`` is written as a Hub repository id: ``owner/name`` of letters, digits,
    ``-``, ``_`` and ``.`` (at most 96 characters; no ``--`` or ``..``).

    >>> [is_hub_id(t) for t in ("Qwen/Qwen2.5-7B", "meta-llama/Llama-3.1-8B", "gpt2", "a/b/c", "./x", "a/../b")]
    [True, True, False, False, False, False]
    """
    return len(text) <= 96 and _HUB_ID.fullmatch(text) is not None


def choose_files(names: Iterable[str]) -> tuple[str, ...] | None:
    """The first of :data:`CANDIDATES` that a repository's file names hold, as paths in the
    repository; None when it holds none.

    >>> choose_files(["README.md", "merges.txt", "tokenizer.json", "vocab.json"])
    ('tokenizer.json',)
    >>> choose_files(["vocab.json", "merges.txt", "tokenizer.model"])
    ('vocab.json', 'merges.txt')
    >>> choose_files(["tokenizer.model", "qwen.tiktoken", "sub/other.tiktoken"])
    ('qwen.tiktoken',)
    >>> choose_files(["config.json", "original/tokenizer.model"]), choose_files(["tokenizer.json", "tekken.json"])
    (('original/tokenizer.model',), ('tekken.json',))
    >>> choose_files(["config.json", "params.json"]) is None
    True
    """
    present = set(names)
    for wanted in CANDIDATES:
        if wanted == ("*.tiktoken",):
            found = sorted(n for n in present if "/" not in n and n.lower().endswith(".tiktoken"))
            if found:
                return (found[0],)
        elif all(n in present for n in wanted):
            return wanted
    return None


class HubFiles(NamedTuple):
    """What was fetched: the files by their base name (as an upload names them), the commit
    they were read at, and why the cache was read instead of the Hub (None: the Hub answered)."""

    repo_id: str
    revision: str | None
    commit: str | None
    files: dict[str, bytes]
    offline: str | None = None

    @property
    def source(self) -> str:
        """The repository as it was asked for: ``owner/name`` or ``owner/name@revision``."""
        return self.repo_id + (f"@{self.revision}" if self.revision else "")


class HubSettings(NamedTuple):
    """The Hub's settings as the environment says now (huggingface_hub reads its own at import)."""

    endpoint: str | None  # None: huggingface_hub's default
    cache_dir: str | None  # None: huggingface_hub's default
    offline: bool

    @property
    def shown(self) -> str:
        """The Hub as a message names it: never a mirror's host or port (a page shows messages to
        students; the operator knows which HF_ENDPOINT they set).

        >>> HubSettings(None, None, False).shown, HubSettings("http://10.0.0.7:8080", None, False).shown
        ('huggingface.co', 'HF_ENDPOINT')
        """
        default = "https://huggingface.co"
        return "huggingface.co" if (self.endpoint or default).rstrip("/") == default else "HF_ENDPOINT"


def hub_settings() -> HubSettings:
    """huggingface_hub's settings as the environment holds them now (a cache of fetched files keys
    on them: another endpoint or cache is another fetch)."""
    env = os.environ
    cache = env.get("HF_HUB_CACHE") or (str(Path(env["HF_HOME"]) / "hub") if env.get("HF_HOME") else None)
    offline = (env.get("HF_HUB_OFFLINE") or "").strip().upper() in {"1", "ON", "YES", "TRUE"}
    return HubSettings(env.get("HF_ENDPOINT") or None, cache, offline)


def _check(repo_id: str, revision: str | None) -> None:
    if not is_hub_id(repo_id):
        raise ConfigError(
            f"{repo_id[:100]!r} is not a Hub repository id: write it as owner/name (letters, digits, '-', '_', '.')"
        )
    if revision is not None and (not revision or len(revision) > 200 or any(c.isspace() for c in revision)):
        raise ConfigError(f"{revision[:100]!r} is not a revision: a branch, a tag or a commit hash, without spaces")


def _unreachable(where: HubSettings, err: BaseException) -> str:
    if where.offline:
        return "offline mode is on (HF_HUB_OFFLINE)"
    # the error's own text names the host and port it tried: its kind alone
    return f"the Hub at {where.shown} cannot be reached ({type(err).__name__})"


def _sentence(err: BaseException, repo_id: str, revision: str | None, where: HubSettings) -> str:
    """One sentence for what huggingface_hub raised (its own messages run to several lines)."""
    from huggingface_hub import errors

    if isinstance(err, errors.GatedRepoError):  # a subclass of RepositoryNotFoundError: first
        token = "HF_TOKEN is set but its account has no access" if os.environ.get("HF_TOKEN") else "HF_TOKEN is not set"
        return (
            f"{repo_id} is a gated repository ({token}): accept its conditions on its Hub page, "
            "then set HF_TOKEN to an access token of that account"
        )
    if isinstance(err, errors.RevisionNotFoundError):
        return f"{repo_id} has no revision {revision!r} on the Hub at {where.shown}"
    if isinstance(err, errors.RepositoryNotFoundError):
        return (
            f"no repository {repo_id} on the Hub at {where.shown} (if it is private, set HF_TOKEN to a token "
            "that can read it)"
        )
    if isinstance(err, errors.RemoteEntryNotFoundError):
        return f"{repo_id} lists a tokenizer file that the Hub at {where.shown} does not serve"
    if isinstance(err, errors.FileMetadataError):
        return f"{where.shown} does not answer as the Hub does (check HF_ENDPOINT)"
    if isinstance(err, errors.HfHubHTTPError) and err.response is not None:
        return f"the Hub at {where.shown} answered {err.response.status_code} for {repo_id}"
    return f"{repo_id} cannot be fetched: {_unreachable(where, err)}"


def _is_offline_error(err: BaseException) -> bool:
    """The network, not the Hub's answer: no connection, a timeout, offline mode."""
    import httpx2
    from huggingface_hub import errors

    return isinstance(err, (httpx2.TransportError, errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError))


def _cached_names(repo_id: str, revision: str | None, where: HubSettings) -> tuple[str | None, list[str]]:
    """(commit, file paths) of the repository at this revision as the Hub's cache holds it
    (``models--owner--name/refs/<revision>`` names the commit, ``snapshots/<commit>`` its files)."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import repo_folder_name

    folder = Path(where.cache_dir or constants.HF_HUB_CACHE) / repo_folder_name(repo_id=repo_id, repo_type="model")
    rev = revision or "main"
    commit: str | None = rev if _COMMIT.fullmatch(rev) else None
    ref = folder / "refs" / rev
    if commit is None and ref.is_file():
        commit = ref.read_text(encoding="utf-8").strip()
    snapshot = folder / "snapshots" / commit if commit else None
    if snapshot is None or not snapshot.is_dir():
        return None, []
    return commit, sorted(p.relative_to(snapshot).as_posix() for p in snapshot.rglob("*") if p.is_file())


def _listing(
    repo_id: str, revision: str | None, where: HubSettings, max_bytes: int | None
) -> tuple[str | None, list[str]]:
    """(commit, file paths) as the Hub lists them; files over ``max_bytes`` in all are refused
    before any is fetched."""
    from huggingface_hub import HfApi

    info = HfApi(endpoint=where.endpoint).model_info(repo_id, revision=revision, timeout=TIMEOUT, files_metadata=True)
    siblings = info.siblings or []
    names = [s.rfilename for s in siblings]
    chosen = choose_files(names)
    if max_bytes is not None and chosen is not None:
        size = sum(s.size or 0 for s in siblings if s.rfilename in chosen)
        if size > max_bytes:
            raise HubError(
                f"{repo_id}'s tokenizer files ({', '.join(chosen)}) hold {size:,} bytes; the limit here is {max_bytes:,}"
            )
    return info.sha, names


def _no_file(repo_id: str, names: list[str], offline: str | None) -> ExplorerError:
    if offline is not None:
        return HubError(
            f"{repo_id} cannot be fetched: {offline}, and no tokenizer file of it is in the local cache "
            "(open it once while online)"
        )
    return FormatError(
        f"{repo_id} holds no tokenizer file read here: looked for tekken.json, tokenizer.json, "
        "vocab.json + merges.txt, a .tiktoken file or tokenizer.model"
    )


def fetch_files(repo_id: str, *, revision: str | None = None, max_bytes: int | None = None) -> HubFiles:
    """The tokenizer files of a Hub repository (see the module), fetched into the Hub's cache
    and read. Raises ConfigError (not a repository id), HubError or FormatError, each one
    sentence."""
    _check(repo_id, revision)
    from huggingface_hub import errors, hf_hub_download

    where = hub_settings()
    offline: str | None = _unreachable(where, OSError()) if where.offline else None
    try:
        if offline is None:
            try:
                commit, names = _listing(repo_id, revision, where, max_bytes)
            except Exception as err:  # noqa: BLE001 - sorted below: the network's fault reads the cache
                if not _is_offline_error(err):
                    raise
                offline = _unreachable(where, err)
        if offline is not None:
            commit, names = _cached_names(repo_id, revision, where)
        chosen = choose_files(names)
        if chosen is None:
            raise _no_file(repo_id, names, offline)
        files = {}
        for name in chosen:
            path = hf_hub_download(
                repo_id,
                name,
                revision=revision,
                endpoint=where.endpoint,
                cache_dir=where.cache_dir,
                local_files_only=offline is not None,
                etag_timeout=TIMEOUT,
            )
            files[PurePosixPath(name).name] = Path(path).read_bytes()
    except (HubError, FormatError):
        raise
    except errors.HFValidationError as err:
        raise ConfigError(f"{repo_id[:100]!r} is not a Hub repository id: {str(err).splitlines()[0]}") from None
    except Exception as err:  # noqa: BLE001 - huggingface_hub's many errors, each made one sentence
        raise HubError(_sentence(err, repo_id, revision, where)) from None
    return HubFiles(repo_id, revision, commit, files, offline)


def open_hub(
    repo_id: str,
    *,
    revision: str | None = None,
    pretokenizer: str | None = None,
    pattern: str | None = None,
    normalizer: NormalizerName | None = None,
) -> ImportReport:
    """The tokenizer of a Hub repository: :func:`fetch_files`, then the importers read the files
    as uploaded ones (``pretokenizer``, ``pattern`` and ``normalizer`` for files that name none,
    as :func:`importers.import_report`); a note says where they came from."""
    got = fetch_files(repo_id, revision=revision)
    report = import_report(got.files, pretokenizer=pretokenizer, pattern=pattern, normalizer=normalizer)
    return report._replace(notes=(hub_note(got), *report.notes))


def hub_note(got: HubFiles) -> str:
    """Where the files came from, for a page or the CLI to say.

    >>> hub_note(HubFiles("o/n", None, "0123456789abcdef" * 2 + "01234567", {"tokenizer.json": b""}))
    'read tokenizer.json of o/n from the Hub, commit 0123456789ab'
    >>> hub_note(HubFiles("o/n", "v2", None, {"vocab.json": b"", "merges.txt": b""}, "offline mode is on"))
    'read vocab.json + merges.txt of o/n@v2 from the local cache, as offline mode is on'
    """
    at = f", commit {got.commit[:12]}" if got.commit else ""
    where = "the local cache" if got.offline else "the Hub"
    why = f", as {got.offline}" if got.offline else ""
    return f"read {' + '.join(got.files)} of {got.source} from {where}{at}{why}"

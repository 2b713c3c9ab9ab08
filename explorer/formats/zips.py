"""Zips: the Train page downloads a format of several files as one zip, and an import reads a
zip as the files it holds (``expand_zips``), so a download imports as it is.

Reading is in memory and bounded (``unzip_files``): a zip bomb, a path out of the zip, too many
files, a nested, encrypted or damaged zip are FormatErrors of one sentence.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from collections.abc import Mapping

from ..errors import FormatError
from .base import require
from .corpora import MAX_CORPUS_BYTES, mib

__all__ = ["OR_THEIR_ZIP", "ZIP_MAX_MEMBERS", "ZIP_MAX_RATIO", "expand_zips", "is_zip", "unzip_files", "zip_files"]

OR_THEIR_ZIP = ", or the .zip of them the Train page downloads"  # ends what to upload of a format of several files


def zip_files(files: Mapping[str, bytes]) -> bytes:
    """Several files as one zip (a download button hands out one file)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


ZIP_MAX_MEMBERS = 64
ZIP_MAX_RATIO = 100  # unpacked : packed, per member (a larger one is refused as a possible zip bomb)
_ZIP_RATIO_FROM = 1 << 20  # members up to 1 MiB unpacked may compress better (the total is bounded anyway)
_ZIP_DIRECTORY_MAX = ZIP_MAX_MEMBERS * 4096  # bytes of the central directory read at most
_ZIP_JUNK = ("__MACOSX/", ".DS_Store", "._")  # macOS metadata a zip made in Finder carries


def is_zip(data: bytes) -> bool:
    """Whether bytes are a zip (by its signature, as unzip tools tell).

    >>> is_zip(b"PK\\x03\\x04..."), is_zip(b"#version: 0.2")
    (True, False)
    """
    return data[:4] in (b"PK\x03\x04", b"PK\x05\x06")


def _member_problem(member: str) -> str | None:
    """Why a member's name is refused: a path out of the zip or control characters. Names are
    never used as paths here; a zip that holds such a name is not one this app wrote.

    >>> _member_problem("dir/vocab.json"), _member_problem("../x"), _member_problem("a\\\\..\\\\x")
    (None, "points outside the zip ('..' or an absolute path)", "points outside the zip ('..' or an absolute path)")
    """
    parts = re.split(r"[\\/]", member)
    if member.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", member) or ".." in parts:
        return "points outside the zip ('..' or an absolute path)"
    if any(ord(c) < 32 or ord(c) == 127 for c in member):
        return "holds control characters"
    return None


def _zip_directory_check(name: str, data: bytes) -> None:
    """The member count and directory size from the zip's last record, before any is parsed."""
    at = data.rfind(b"PK\x05\x06", max(0, len(data) - 22 - 65535))
    if at < 0 or len(data) < at + 22:
        return  # zipfile says what is wrong
    entries = int.from_bytes(data[at + 10 : at + 12], "little")
    size = int.from_bytes(data[at + 12 : at + 16], "little")
    require(
        entries <= ZIP_MAX_MEMBERS,
        f"{name} holds {entries:,} files; a tokenizer's zip is read only with at most {ZIP_MAX_MEMBERS}",
    )
    require(
        size <= _ZIP_DIRECTORY_MAX,
        f"{name}: its list of files takes {size:,} bytes, more than a zip of {ZIP_MAX_MEMBERS} files needs",
    )


def _unpack(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, *, room: int) -> bytes:
    """A member's bytes, counted as they come out: reading stops as soon as there are more than
    its header says (which the size checks went by) or than is left of the limit."""
    cap = min(info.file_size, room)
    chunks: list[bytes] = []
    got = 0
    try:
        with archive.open(info) as f:
            while chunk := f.read(1 << 16):
                got += len(chunk)
                require(
                    got <= cap,
                    f"{name}: {info.filename!r} unpacks to more than its header says "
                    f"({info.file_size:,} bytes); refused as a possible zip bomb",
                )
                chunks.append(chunk)
    except FormatError:
        raise
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, RuntimeError, ValueError, NotImplementedError) as err:
        raise FormatError(f"{name}: {info.filename!r} cannot be unpacked ({err})") from None
    return b"".join(chunks)


def unzip_files(name: str, data: bytes, *, limit: int = MAX_CORPUS_BYTES) -> dict[str, bytes]:
    """The files of a zip by base name, read in memory (nothing is written anywhere), bounded:
    at most ZIP_MAX_MEMBERS entries, ``limit`` bytes unpacked in all, ZIP_MAX_RATIO : 1 per
    member (by its header and by the bytes that come out). Directories and macOS metadata are
    skipped; a name leading out of the zip, an encrypted or nested zip member, a compression
    other than deflate or none, and a damaged zip are FormatErrors that say so.

    >>> unzip_files("t.zip", zip_files({"a/vocab.json": b"{}", "merges.txt": b"#version: 0.2"}))
    {'vocab.json': b'{}', 'merges.txt': b'#version: 0.2'}
    """
    _zip_directory_check(name, data)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, ValueError, NotImplementedError) as err:
        raise FormatError(f"{name} is not a readable zip ({err})") from None
    out: dict[str, bytes] = {}
    full_names: dict[str, str] = {}
    total = 0
    with archive:
        infos = archive.infolist()
        require(
            len(infos) <= ZIP_MAX_MEMBERS,
            f"{name} holds {len(infos):,} files; a tokenizer's zip is read only with at most {ZIP_MAX_MEMBERS}",
        )
        for info in infos:
            member = info.filename
            problem = _member_problem(member)
            require(problem is None, f"{name}: the member {member!r} {problem}, so the zip is not read")
            base = re.split(r"[\\/]", member)[-1]
            if (
                info.is_dir()
                or not base
                or member.startswith(_ZIP_JUNK[0])
                or base == _ZIP_JUNK[1]
                or base.startswith(_ZIP_JUNK[2])
            ):
                continue
            require(
                not base.lower().endswith(".zip"),
                f"{name}: {member!r} is a zip inside the zip; nested zips are not read",
            )
            require(not info.flag_bits & 0x1, f"{name}: {member!r} is encrypted; give the files without a password")
            require(
                info.compress_type in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED),
                f"{name}: {member!r} is packed with compression method {info.compress_type}, which is not read "
                "(use deflate, every zip tool's default)",
            )
            room = limit - total
            require(
                info.file_size <= room, f"{name}: its files unpack to more than {mib(limit)}, the limit for uploads"
            )
            packed = max(1, min(info.compress_size, len(data)))  # the header may lie: not more than the zip holds
            require(
                info.file_size <= _ZIP_RATIO_FROM or info.file_size <= packed * ZIP_MAX_RATIO,
                f"{name}: {member!r} unpacks {info.file_size // packed:,} times larger than it is packed "
                f"(more than {ZIP_MAX_RATIO} : 1); refused as a possible zip bomb",
            )
            content = _unpack(archive, info, name, room=room)
            require(not is_zip(content), f"{name}: {member!r} is a zip inside the zip; nested zips are not read")
            require(base not in out, f"{name} holds two files named {base} ({full_names.get(base)!r} and {member!r})")
            total += len(content)
            out[base] = content
            full_names[base] = member
    return out


def expand_zips(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The files with each zip among them replaced by the files it holds."""
    out: dict[str, bytes] = {}
    zipped: dict[str, str] = {}  # member -> the zip it came from
    for name, data in files.items():
        inner = unzip_files(name, data) if is_zip(data) or name.lower().endswith(".zip") else {name: data}
        require(bool(inner), f"{name} holds no files (only folders or macOS metadata, if anything)")
        for member, content in inner.items():
            where = zipped.get(member) or (name if member != name else None)
            require(
                member not in out,
                f"two files named {member}" + (f" (one of them in {where})" if where else "") + ": give each file once",
            )
            out[member] = content
            if member != name:
                zipped[member] = name
    return out

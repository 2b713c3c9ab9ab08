"""Every setting the app reads from its environment, declared once: its name, what it is, its
default and range, and one parser.

A teacher or an operator sets them without editing code (``BPE_EXPLORER_STEP_MIB=2 python -m
explorer app``); ``python -m explorer settings`` prints the values in force and where each came
from. Two kinds, two behaviours on a bad value:

- a **number** (a size, a time, a count): a value that is not a number in its range is logged as
  a warning naming the variable, the value and the default used instead, and the default is used
  (a typo in a limit must not keep a class from starting);
- a **place** (where the store is, the address students join at): a bad value is refused with a
  sentence where it is used, never replaced by a default, since a default store or address
  would quietly split one class over two stores or send students to the wrong host.

A default may depend on the machine (the worker processes: one per core beyond the first; the
data folder: the user's data directory), computed when read. README's table of settings is
:func:`table`'s output (a test holds the two together).

Nothing here imports streamlit: the engine, the servers and the CLI read the same values.

Data shape of the table :data:`SETTINGS` (``name -> Setting``)::

    {"BPE_EXPLORER_STEP_MIB": Setting(name="BPE_EXPLORER_STEP_MIB", kind="number", default=4.0,
                                      unit="MiB", low=0.0, text="corpus size ..."), ...}
"""

from __future__ import annotations

import logging
import math
import os
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

__all__ = [
    "Kind",
    "Setting",
    "SETTINGS",
    "number",
    "count",
    "text",
    "size_bytes",
    "default_number",
    "default_count",
    "default_place",
    "in_force",
    "InForce",
    "table",
    "shown",
    "APP_FOLDER",
]

Kind = Literal["number", "count", "place"]
_log = logging.getLogger(__name__)
APP_FOLDER = "bpe-explorer"  # the data folder's name in the user's data directory
_SHOWN = 40  # characters of a bad value a warning repeats (a pasted file must not flood the log)


def _default_workers() -> int:
    # one worker per core beyond the first (the server's own interpreter keeps one), at least one
    return max(1, (os.cpu_count() or 2) - 1)


def _default_data_dir() -> str:
    """The user's data directory for the app, as each system names it (read when asked: the
    home folder and ``XDG_DATA_HOME`` are the process's own, not this app's settings)."""
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "").strip()
        base = Path(local) if local else Path.home() / "AppData" / "Local"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        xdg = os.environ.get("XDG_DATA_HOME", "").strip()
        base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".local" / "share"
    return str(base / APP_FOLDER)


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``kind`` says how it is read, ``default`` what an unset, empty
    or bad value gives (a function for a default that depends on the machine, ``shown`` saying
    what it is in words; None for a place that has none), ``low`` the bound a number must be
    above, ``forms`` what a place may be, ``secret`` that its value may hold a password."""

    name: str
    kind: Kind
    default: float | int | str | Callable[[], int | str] | None
    unit: str
    text: str
    low: float = 0.0
    shown: str = ""
    forms: str = ""
    secret: bool = False

    def default_value(self) -> float | int | str | None:
        """The default, computed when it depends on the machine.

        >>> SETTINGS["BPE_EXPLORER_WORKERS"].default_value() >= 1
        True
        """
        return self.default() if callable(self.default) else self.default

    def accepts(self) -> str:
        """What a value must be, in words (a number's range; a place's forms).

        >>> SETTINGS["BPE_EXPLORER_ROOM_HOURS"].accepts(), SETTINGS["BPE_EXPLORER_ROOM_SIZE"].accepts()
        ('a number above 0', 'a whole number above 0')
        >>> SETTINGS["BPE_EXPLORER_STEP_MIB"].accepts()
        'a number of MiB above 0, a byte at least'
        """
        if self.kind == "place":
            return self.forms
        if self.unit == "MiB":  # a size below a byte would read as none at all
            return f"a number of MiB above {self.low:g}, a byte at least"
        return f"a {'whole ' if self.kind == 'count' else ''}number above {self.low:g}"


def _declare(*settings: Setting) -> dict[str, Setting]:
    return {s.name: s for s in settings}


SETTINGS: dict[str, Setting] = _declare(
    # where things are kept
    Setting("BPE_EXPLORER_DATA", "place", _default_data_dir, "folder",
            "the data folder of the SQLite store and its uploads", shown="the user's data directory",
            forms="a folder"),
    Setting("BPE_EXPLORER_STORE", "place", "sqlite", "",
            "the store: the SQLite file in the data folder, or a Redis server",
            forms="'sqlite' or a Redis URL (redis://, rediss://, unix://)", secret=True),
    Setting("BPE_EXPLORER_STORE_MIB", "number", 1024.0, "MiB", "what the store keeps in all"),
    Setting("BPE_EXPLORER_SESSION_MIB", "number", 100.0, "MiB", "what one browser may keep in the store"),
    Setting("BPE_EXPLORER_ADDRESS_MIB", "number", 300.0, "MiB", "what the browsers of one network address may keep"),
    # one server's sessions
    Setting("BPE_EXPLORER_STEP_MIB", "number", 4.0, "MiB",
            "corpus size up to which a session steps through with full records"),
    Setting("BPE_EXPLORER_IDLE_MINUTES", "number", 30.0, "minutes",
            "a session untouched this long lets its trainer go (rebuilt at the same step on return)"),
    Setting("BPE_EXPLORER_SESSION_TRAIN_MIB", "number", 256.0, "MiB", "the memory one session's trainer may take"),
    Setting("BPE_EXPLORER_SESSION_TRAIN_SECONDS", "number", 300.0, "seconds",
            "the server's CPU time one session's trainer may take"),
    Setting("BPE_EXPLORER_STEP_WORK", "count", 200_000, "positions", "the most positions one merge may visit"),
    Setting("BPE_EXPLORER_SERVER_MIB", "number", 1536.0, "MiB",
            "the server process's memory ceiling: no training goes on past it"),
    Setting("BPE_EXPLORER_WORKERS", "count", _default_workers, "processes", "worker processes for heavy jobs",
            shown="one per core beyond the first, at least 1"),
    Setting("BPE_EXPLORER_JOB_MIB", "number", 2048.0, "MiB", "the memory one worker may use"),
    # class mode
    Setting("BPE_EXPLORER_MAX_ROOMS", "count", 200, "rooms", "rooms a store keeps open"),
    Setting("BPE_EXPLORER_ROOM_SIZE", "count", 100, "students", "students one room takes"),
    Setting("BPE_EXPLORER_ROOM_HOURS", "number", 4.0, "hours", "an idle room closes after this long"),
    Setting("BPE_EXPLORER_EMPTY_ROOM_MINUTES", "number", 30.0, "minutes",
            "a room nobody joined closes after this long idle"),
    Setting("BPE_EXPLORER_ROOM_STARTS", "count", 6, "rooms an hour", "rooms one browser may start an hour"),
    Setting("BPE_EXPLORER_ADDRESS_ROOM_STARTS", "count", 30, "rooms an hour",
            "rooms the browsers of one network address may start an hour"),
    Setting("BPE_EXPLORER_ROOM_MISSES", "count", 20, "a minute",
            "wrong room codes a browser may try a minute"),
    Setting("BPE_EXPLORER_ADDRESS_ROOM_MISSES", "count", 60, "a minute",
            "wrong room codes one network address may try a minute"),
    Setting("BPE_EXPLORER_PUBLIC_URL", "place", None, "URL",
            "the address students join at, when the server's own is not theirs",
            forms="http(s)://host[:port][/path]"),
    Setting("BPE_EXPLORER_LISTEN_ADDRESS", "place", None, "address",
            "the address a server listens on (set by `python -m explorer serve` for its servers)",
            forms="an IP address or host name"),
)  # fmt: skip


def _raw(name: str, env: Mapping[str, str] | None) -> str:
    return (os.environ if env is None else env).get(name, "").strip()


def _read(setting: Setting, raw: str) -> float | None:
    """A number setting's value from its text, or None when it is not one in its range (what
    Python reads as a number, digit groups too, as every reader before this one took).

    >>> s = SETTINGS["BPE_EXPLORER_STEP_MIB"]
    >>> [_read(s, r) for r in ("0.5", "2", "1_000", "0", "-1", "lots", "nan", "inf", "1e400", "1e-9")]
    [0.5, 2.0, 1000.0, None, None, None, None, None, None, None]
    >>> [_read(SETTINGS["BPE_EXPLORER_WORKERS"], r) for r in ("3", "2e5", "2.0", "2.5", "0", "1,000")]
    [3, 200000, 2, None, None, None]
    """
    try:
        value = float(raw)
    except ValueError:
        return None
    if not math.isfinite(value) or not value > setting.low:
        return None
    if setting.unit == "MiB" and value * 2**20 < 1:  # a size is at least a byte
        return None
    if setting.kind == "count":
        return int(value) if value.is_integer() else None
    return value


def _shown(raw: str) -> str:
    """A bad value as a warning repeats it: quoted, escaped (one line, whatever it holds) and
    shortened.

    >>> print(_shown("lots"), _shown("4\\n# injected"), _shown("9" * 100)[-6:])
    'lots' '4\\n# injected' 9999'…
    """
    return repr(raw[:_SHOWN]) + ("…" if len(raw) > _SHOWN else "")


def _setting(name: str, kind: Kind) -> Setting:
    """The declaration of ``name``, which must be of ``kind`` (a reader asking a number for a
    place is a bug, said at once)."""
    setting = SETTINGS[name]
    if setting.kind != kind:
        raise TypeError(f"{name} is a {setting.kind}, not a {kind}")
    return setting


def _number(name: str, kind: Kind, env: Mapping[str, str] | None) -> float:
    setting = _setting(name, kind)
    default = setting.default_value()
    assert isinstance(default, int | float)  # a number's default is a number
    raw = _raw(name, env)
    if not raw:
        return default
    value = _read(setting, raw)
    if value is None:
        _log.warning("%s=%s is not %s; using the default, %s", name, _shown(raw), setting.accepts(), default)
        return default
    return value


def number(name: str, *, env: Mapping[str, str] | None = None) -> float:
    """A number setting's value (its default when unset, empty or bad: a bad one is logged).

    >>> number("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "0.5"})
    0.5
    >>> number("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "lots"})
    4.0
    """
    return float(_number(name, "number", env))


def count(name: str, *, env: Mapping[str, str] | None = None) -> int:
    """A whole-number setting's value (its default when unset, empty or bad: a bad one is logged).

    >>> count("BPE_EXPLORER_MAX_ROOMS", env={"BPE_EXPLORER_MAX_ROOMS": "12"}), count("BPE_EXPLORER_MAX_ROOMS", env={})
    (12, 200)
    """
    return int(_number(name, "count", env))


def size_bytes(name: str, *, env: Mapping[str, str] | None = None) -> int:
    """A size setting (in MiB) in bytes, a byte at least (:func:`number`, then converted once here).

    >>> size_bytes("BPE_EXPLORER_STEP_MIB", env={"BPE_EXPLORER_STEP_MIB": "0.5"})
    524288
    """
    if SETTINGS[name].unit != "MiB":
        raise TypeError(f"{name} is no size in MiB")
    return int(number(name, env=env) * 2**20)


def default_number(name: str) -> float:
    """A number setting's default.

    >>> default_number("BPE_EXPLORER_ROOM_HOURS")
    4.0
    """
    return float(_setting(name, "number").default_value() or 0)


def default_count(name: str) -> int:
    """A whole-number setting's default.

    >>> default_count("BPE_EXPLORER_MAX_ROOMS")
    200
    """
    return int(_setting(name, "count").default_value() or 0)


def text(name: str, *, env: Mapping[str, str] | None = None) -> str | None:
    """A place setting's text, stripped (None when unset or empty); its reader checks it.

    >>> text("BPE_EXPLORER_PUBLIC_URL", env={"BPE_EXPLORER_PUBLIC_URL": " http://10.0.0.5:8501 "})
    'http://10.0.0.5:8501'
    """
    _setting(name, "place")
    return _raw(name, env) or None


def default_place(name: str) -> str | None:
    """A place setting's default, computed when it depends on the machine (None: it has none).

    >>> default_place("BPE_EXPLORER_STORE"), default_place("BPE_EXPLORER_PUBLIC_URL")
    ('sqlite', None)
    """
    value = _setting(name, "place").default_value()
    assert value is None or isinstance(value, str), name
    return value


def _without_password(url: str) -> str:
    """A URL with its password (in the address or its query) replaced by ``***``, so that
    printing the settings in force shows no secret.

    >>> _without_password("redis://app:s%40fe@cache.example:6380/2?db=1&password=other")
    'redis://app:***@cache.example:6380/2?db=1&password=***'
    >>> _without_password("sqlite"), _without_password("redis://cache.example")
    ('sqlite', 'redis://cache.example')
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL at all: nothing in it is read as a password either
        return url
    netloc = parts.netloc
    if parts.password is not None:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.partition(':')[0]}:***@{host}"
    query = "&".join(
        f"{key}=***" if key == "password" else item
        for item in parts.query.split("&")
        for key in [item.partition("=")[0]]
    )
    return parts._replace(netloc=netloc, query=query).geturl()


@dataclass(frozen=True)
class InForce:
    """A setting's value in force and where it came from: "environment", "default", or "default
    (bad value)" for a number whose value was not one. A password in a place's value is shown
    as ``***``."""

    setting: Setting
    value: float | int | str | None
    source: str


def in_force(*, env: Mapping[str, str] | None = None) -> Iterator[InForce]:
    """Every setting's value in force, in :data:`SETTINGS`' order (a bad number is logged, as
    where it is read).

    >>> [(s.setting.name, s.value, s.source) for s in in_force(env={"BPE_EXPLORER_ROOM_SIZE": "x"})][14]
    ('BPE_EXPLORER_ROOM_SIZE', 100, 'default (bad value)')
    """
    for setting in SETTINGS.values():
        raw = _raw(setting.name, env)
        if setting.kind == "place":
            place = raw or default_place(setting.name)
            if place is not None and setting.secret:
                place = _without_password(place)
            yield InForce(setting, place, "environment" if raw else "default")
            continue
        value = _number(setting.name, setting.kind, env)  # the default when unset or bad (logged)
        good = bool(raw) and _read(setting, raw) is not None
        yield InForce(setting, value, "environment" if good else "default (bad value)" if raw else "default")


def shown(setting: Setting, value: float | int | str | None) -> str:
    """A setting's value as the table and the ``settings`` command print it: a number with its
    unit, a place as it is, "(unset)" for none.

    >>> s = SETTINGS["BPE_EXPLORER_STEP_WORK"]
    >>> shown(s, 200_000), shown(SETTINGS["BPE_EXPLORER_JOB_MIB"], 2048.0), shown(s, None)
    ('200,000 positions', '2,048 MiB', '(unset)')
    """
    if value is None:
        return "(unset)"
    if isinstance(value, str):
        return value
    number = f"{value:,g}" if isinstance(value, float) else f"{value:,}"
    return f"{number} {setting.unit}".rstrip()


def _default_shown(setting: Setting) -> str:
    """A setting's default as README's table gives it: in words when the machine decides it,
    else the value with its unit."""
    if setting.shown:
        return setting.shown
    if setting.default is None:
        return "unset"
    assert not callable(setting.default)  # a default the machine decides is said in words
    return shown(setting, setting.default)


def table() -> str:
    """README's table of the settings, a row each in :data:`SETTINGS`' order: name, default,
    what a value must be, what it is.

    >>> table().splitlines()[-4]
    '| `BPE_EXPLORER_ROOM_MISSES` | 20 a minute | a whole number above 0 | wrong room codes a browser may try a minute |'
    """
    rows = ["| setting | default | a value is | what it is |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | {_default_shown(s)} | {s.accepts()} | {s.text} |" for s in SETTINGS.values()]
    return "\n".join(rows) + "\n"

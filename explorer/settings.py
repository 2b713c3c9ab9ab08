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

Nothing here imports streamlit: the engine, the servers and the CLI read the same values.

Data shape of the table :data:`SETTINGS` (``name -> Setting``)::

    {"BPE_EXPLORER_STEP_MIB": Setting(name="BPE_EXPLORER_STEP_MIB", kind="number", default=4.0,
                                      unit="MiB", low=0.0, text="corpus size ..."), ...}
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Kind",
    "Setting",
    "SETTINGS",
    "number",
    "count",
    "text",
    "default_number",
    "default_count",
    "in_force",
    "InForce",
]

Kind = Literal["number", "count", "place"]
_log = logging.getLogger(__name__)


def _default_workers() -> int:
    # one worker per core beyond the first (the server's own interpreter keeps one), at least one
    return max(1, (os.cpu_count() or 2) - 1)


@dataclass(frozen=True)
class Setting:
    """One environment variable: ``kind`` says how it is read, ``default`` what an unset, empty
    or bad value gives (a function for a default that depends on the machine; None for a place
    that has none), ``low`` the bound a number must be above."""

    name: str
    kind: Kind
    default: float | int | str | Callable[[], int] | None
    unit: str
    text: str
    low: float = 0.0

    def default_value(self) -> float | int | str | None:
        """The default, computed when it depends on the machine.

        >>> SETTINGS["BPE_EXPLORER_WORKERS"].default_value() >= 1
        True
        """
        return self.default() if callable(self.default) else self.default


def _declare(*settings: Setting) -> dict[str, Setting]:
    return {s.name: s for s in settings}


SETTINGS: dict[str, Setting] = _declare(
    # where things are kept
    Setting("BPE_EXPLORER_DATA", "place", None, "folder",
            "the data folder of the SQLite store and its uploads (default: the user's data directory)"),
    Setting("BPE_EXPLORER_STORE", "place", "sqlite", "",
            "the store: 'sqlite' (the file in the data folder) or a Redis URL (redis://, rediss://, unix://)"),
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
    Setting("BPE_EXPLORER_WORKERS", "count", _default_workers, "processes",
            "worker processes for heavy jobs (default: one per core beyond the first, at least one)"),
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
            "the address students join at, when the server's own is not theirs (http://host[:port][/path])"),
    Setting("BPE_EXPLORER_LISTEN_ADDRESS", "place", None, "address",
            "the address a server listens on (set by `python -m explorer serve`/`app` for their servers)"),
)  # fmt: skip


def _raw(name: str, env: Mapping[str, str] | None) -> str:
    return (os.environ if env is None else env).get(name, "").strip()


def _read(setting: Setting, raw: str) -> float | None:
    """A number setting's value from its text, or None when it is not one in its range.

    >>> s = SETTINGS["BPE_EXPLORER_STEP_MIB"]
    >>> [_read(s, r) for r in ("0.5", "2", "0", "-1", "lots", "nan", "inf", "1e400", "1e-9")]
    [0.5, 2.0, None, None, None, None, None, None, None]
    >>> [_read(SETTINGS["BPE_EXPLORER_WORKERS"], r) for r in ("3", "2e5", "2.5", "0", "1_0")]
    [3, 200000, None, None, None]
    """
    try:
        value = float(raw)
    except ValueError:
        return None
    # "1_0" is a float to Python, not to a person; a count must be whole ("2e5" is)
    if "_" in raw or not math.isfinite(value) or not value > setting.low:
        return None
    if setting.unit == "MiB" and value * 2**20 < 1:  # a size is at least a byte
        return None
    if setting.kind == "count":
        return int(value) if value.is_integer() else None
    return value


def _number(name: str, kind: Kind, env: Mapping[str, str] | None) -> float:
    setting = SETTINGS[name]
    if setting.kind != kind:
        raise TypeError(f"{name} is a {setting.kind}, not a {kind}")
    default = setting.default_value()
    assert isinstance(default, int | float)  # a number's default is a number
    raw = _raw(name, env)
    if not raw:
        return default
    value = _read(setting, raw)
    if value is None:
        wanted = "a whole number above 0" if kind == "count" else f"a number above {setting.low:g}"
        _log.warning("%s=%r is not %s; using the default, %s", name, raw[:40], wanted, default)
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


def default_number(name: str) -> float:
    """A number setting's default.

    >>> default_number("BPE_EXPLORER_ROOM_HOURS")
    4.0
    """
    value = SETTINGS[name].default_value()
    assert isinstance(value, int | float) and SETTINGS[name].kind == "number", name
    return float(value)


def default_count(name: str) -> int:
    """A whole-number setting's default.

    >>> default_count("BPE_EXPLORER_MAX_ROOMS")
    200
    """
    value = SETTINGS[name].default_value()
    assert isinstance(value, int) and SETTINGS[name].kind == "count", name
    return value


def text(name: str, *, env: Mapping[str, str] | None = None) -> str | None:
    """A place setting's text, stripped (None when unset or empty); its reader checks it.

    >>> text("BPE_EXPLORER_PUBLIC_URL", env={"BPE_EXPLORER_PUBLIC_URL": " http://10.0.0.5:8501 "})
    'http://10.0.0.5:8501'
    """
    if SETTINGS[name].kind != "place":
        raise TypeError(f"{name} is a {SETTINGS[name].kind}, not a place")
    return _raw(name, env) or None


@dataclass(frozen=True)
class InForce:
    """A setting's value in force and where it came from: "environment", "default", or "default
    (bad value ...)" for a number whose value was not one."""

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
            yield InForce(setting, raw or setting.default_value(), "environment" if raw else "default")
            continue
        value = count(setting.name, env=env) if setting.kind == "count" else number(setting.name, env=env)
        good = bool(raw) and _read(setting, raw) is not None
        yield InForce(setting, value, "environment" if good else "default (bad value)" if raw else "default")

"""Where students reach the app: this machine's network addresses, and the address a join link
names.

A teacher opens the app as ``http://localhost:8501``; a link built from that address sends every
phone to itself. So a join link is built from:

1. ``BPE_EXPLORER_PUBLIC_URL`` (``serve --public-url``) when set: the app behind a proxy or a
   domain (``https://bpe.school.example/``), exactly as given;
2. else the address in the teacher's browser, when that is one other machines can use (the
   teacher opened the app by its network address or a host name);
3. else, when the browser's host is this machine's own (``localhost``, ``127.x``, ``::1``) or a
   wildcard (``0.0.0.0``, ``::``), this machine's network address (:func:`lan_addresses`, read
   from the interfaces: no packet is sent) with the browser's port.

``python -m explorer serve`` and ``app`` print the address students use (:func:`students_line`);
``--class`` makes them listen on every interface (``0.0.0.0``): the default, ``127.0.0.1``, is
this machine alone, which a phone cannot reach.

This module imports neither Streamlit nor pandas nor Altair.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit

from .. import settings
from ..errors import ExplorerError

__all__ = [
    "PUBLIC_URL_ENV",
    "LISTEN_ENV",
    "is_local_host",
    "lan_addresses",
    "rank_addresses",
    "check_public_url",
    "public_url",
    "host_url",
    "join_base",
    "students_line",
    "listens_locally",
]

PUBLIC_URL_ENV = "BPE_EXPLORER_PUBLIC_URL"
# set by ``serve`` for its app servers behind haproxy: the address the proxy listens on (the
# servers themselves listen on 127.0.0.1), so that a page can tell whether phones reach it
LISTEN_ENV = "BPE_EXPLORER_LISTEN_ADDRESS"
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
# interfaces of containers, virtual machines and VPNs: an address there is rarely the classroom's
_VIRTUAL = ("docker", "br-", "veth", "virbr", "vmnet", "vboxnet", "lxc", "lxd", "cni", "flannel", "podman")
_TUNNEL = ("tun", "tap", "utun", "wg", "tailscale", "zt", "ppp")


def is_local_host(host: str) -> bool:
    """Whether ``host`` names this machine to itself (or any address: a wildcard), so that a link
    built from it would send another machine to itself.

    >>> [is_local_host(h) for h in ("localhost", "127.0.1.1", "::1", "[::1]", "0.0.0.0", "::", "")]
    [True, True, True, True, True, True, True]
    >>> [is_local_host(h) for h in ("192.168.1.20", "fd00::2", "bpe.school.example")]
    [False, False, False]
    """
    host = host.strip().strip("[]").lower().rstrip(".")
    if not host or host in _LOCAL_NAMES or host.endswith(".localhost"):
        return True
    try:
        ip = ipaddress.ip_address(host.split("%")[0])
    except ValueError:
        return False
    return ip.is_loopback or ip.is_unspecified


def rank_addresses(found: Iterable[tuple[str, str]]) -> list[str]:
    """(interface, address) pairs as the addresses a student's device may reach, best first:
    loopback, link-local, multicast and wildcard addresses dropped; IPv4 before IPv6, private
    (a classroom's network) before public, real interfaces before containers' and tunnels'; the
    interfaces' own order otherwise. Each address once.

    >>> rank_addresses([("lo", "127.0.0.1"), ("docker0", "172.17.0.1"), ("wlan0", "fe80::1"),
    ...                 ("wlan0", "2001:db8::5"), ("wlan0", "192.168.1.20"), ("tun0", "10.8.0.2")])
    ['192.168.1.20', '10.8.0.2', '172.17.0.1', '2001:db8::5']
    """
    ranked: list[tuple[tuple[int, int, int], int, str]] = []
    seen: set[str] = set()
    for order, (name, address) in enumerate(found):
        text = address.split("%")[0]
        try:
            ip = ipaddress.ip_address(text)
        except ValueError:
            continue
        if ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified or text in seen:
            continue
        seen.add(text)
        kind = 2 if name.startswith(_VIRTUAL) else 1 if name.startswith(_TUNNEL) else 0
        ranked.append(((ip.version, kind, 0 if ip.is_private else 1), order, text))
    return [text for _key, _order, text in sorted(ranked)]


def lan_addresses() -> list[str]:
    """This machine's addresses that other machines on its networks may reach, best first
    (:func:`rank_addresses`), read from its network interfaces that are up; nothing is sent."""
    try:
        import psutil
    except ImportError:  # the host name's addresses, as the resolver knows them
        return _from_host_name()
    stats = psutil.net_if_stats()
    found = [
        (name, a.address)
        for name, addresses in psutil.net_if_addrs().items()
        if name not in stats or stats[name].isup
        for a in addresses
        if a.family in (socket.AF_INET, socket.AF_INET6)
    ]
    return rank_addresses(found)


def _from_host_name() -> list[str]:
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM)
    except OSError:
        return []
    return rank_addresses(("", str(info[4][0])) for info in infos)


def check_public_url(text: str, *, source: str = PUBLIC_URL_ENV) -> str:
    """A public base address as given (``--public-url``, ``BPE_EXPLORER_PUBLIC_URL``: ``source``
    names it in the message): http or https, a host, no query or fragment; returned without its
    trailing slash.

    >>> check_public_url(" https://bpe.school.example/class/ ")
    'https://bpe.school.example/class'
    >>> check_public_url("bpe.school.example")
    Traceback (most recent call last):
    ...
    explorer.errors.ExplorerError: BPE_EXPLORER_PUBLIC_URL 'bpe.school.example' is not an address students can open: give it as http://host[:port][/path] or https://...
    """
    value = text.strip()
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ExplorerError(
            f"{source} {value!r} is not an address students can open: give it as "
            "http://host[:port][/path] or https://..."
        )
    return value.rstrip("/")


def public_url() -> str | None:
    """``BPE_EXPLORER_PUBLIC_URL`` checked (None when unset or empty; a bad one raises
    :class:`ExplorerError` with a sentence)."""
    raw = settings.text(PUBLIC_URL_ENV)
    return check_public_url(raw) if raw else None


def host_url(scheme: str, host: str, port: int | None) -> str:
    """``scheme://host[:port]``, an IPv6 address in brackets, the scheme's own port left out.

    >>> host_url("http", "fd00::2", 8501), host_url("https", "bpe.example", 443), host_url("http", "10.0.0.5", None)
    ('http://[fd00::2]:8501', 'https://bpe.example', 'http://10.0.0.5')
    """
    shown = f"[{host}]" if ":" in host else host
    default = {"http": 80, "https": 443}.get(scheme)
    return f"{scheme}://{shown}" if port is None or port == default else f"{scheme}://{shown}:{port}"


def join_base(browser_url: str, *, public: str | None, addresses: Sequence[str]) -> str:
    """The base address a join link starts with: ``public`` when given; the browser's own
    (scheme, host, port, and the path the app is served under) when other machines can use it;
    else the first of this machine's ``addresses`` with the browser's port (the browser's own
    address when there is none: the page says so).

    >>> join_base("http://localhost:8501/Class?room=K7", public=None, addresses=["192.168.1.20"])
    'http://192.168.1.20:8501'
    >>> join_base("http://192.168.1.20:8501/Class", public=None, addresses=["10.0.0.3"])
    'http://192.168.1.20:8501'
    >>> join_base("http://127.0.0.1:8501/", public="https://bpe.example", addresses=["192.168.1.20"])
    'https://bpe.example'
    """
    if public:
        return public.rstrip("/")
    parts = urlsplit(browser_url)
    path = parts.path.rstrip("/")
    for page in ("/Class", "/class"):
        path = path.removesuffix(page)
    host = parts.hostname or ""
    if not is_local_host(host) or not addresses:
        return host_url(parts.scheme or "http", host or "localhost", parts.port) + path
    return host_url(parts.scheme or "http", addresses[0], parts.port) + path


def listens_locally(address: str) -> bool:
    """Whether a server listening on ``address`` is out of other machines' reach (loopback only).

    >>> listens_locally("127.0.0.1"), listens_locally("0.0.0.0"), listens_locally(""), listens_locally("192.168.1.20")
    (True, False, False, False)
    """
    address = address.strip().strip("[]")
    if not address:
        return False  # Streamlit's default: every interface
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return address.lower() in _LOCAL_NAMES


def students_line(address: str, port: int, *, public: str | None, addresses: Sequence[str]) -> str:
    """What ``serve`` and ``app`` print for the teacher about students: where they join, or why
    they cannot.

    >>> students_line("0.0.0.0", 8501, public=None, addresses=["192.168.1.20", "10.8.0.2"])
    'Students join at http://192.168.1.20:8501/Class (also reachable at 10.8.0.2)'
    >>> students_line("127.0.0.1", 8501, public=None, addresses=["192.168.1.20"])
    "Students' devices cannot reach 127.0.0.1: for a class, start it with --class (listens on the network)"
    """
    if public:
        return f"Students join at {public.rstrip('/')}/Class"
    if listens_locally(address):
        return f"Students' devices cannot reach {address}: for a class, start it with --class (listens on the network)"
    wildcard = is_local_host(address)
    usable = list(addresses) if wildcard else [address]
    if not usable:
        return "Students cannot be given an address: this machine has no network address (is it connected?)"
    line = f"Students join at {host_url('http', usable[0], port)}/Class"
    if len(usable) > 1:
        line += f" (also reachable at {', '.join(usable[1:4])})"
    return line

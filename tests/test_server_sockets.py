"""The server's connections send each write at once (``startup.send_at_once``): Streamlit binds
its listening socket with protocol 0, so asyncio leaves Nagle's algorithm on for the connections
it accepts, and every response after a kept-alive connection's first waited for the browser's
delayed acknowledgement (40 ms here)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import urllib.request

import pytest
from appserver import app_process

from explorer.ui import startup


def _accepted_nodelay(listening: socket.socket) -> int:
    """TCP_NODELAY of a connection an asyncio server accepts on ``listening``, as the app's
    server (uvicorn on asyncio) would have it."""

    async def accept_one() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listening)
        try:
            _reader, writer = await asyncio.open_connection(*listening.getsockname())
            value = await asyncio.wait_for(seen, 10)
            writer.close()
            return value
        finally:
            server.close()

    return asyncio.run(accept_one())


def _listening_as_streamlit_binds_it() -> socket.socket:
    sock = socket.socket(family=socket.AF_INET)  # protocol 0: Streamlit's _bind_socket
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.setblocking(False)
    return sock


def test_connections_of_a_socket_bound_as_streamlit_binds_it_keep_nagle_until_the_app_turns_it_off():
    with _listening_as_streamlit_binds_it() as before:
        assert _accepted_nodelay(before) == 0  # what the app's server would do on its own
    with _listening_as_streamlit_binds_it() as listening, socket.socket() as other:
        assert startup.send_at_once() >= 1
        assert _accepted_nodelay(listening) != 0
        # only listening sockets are touched: another TCP socket of the process's is as it was
        assert other.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) == 0


def test_the_served_app_sets_its_listening_socket_to_send_at_once_at_start():
    with app_process() as (url, _proc):
        with urllib.request.urlopen(f"{url}/warm", timeout=30) as answer:
            warm = json.loads(answer.read())
    assert "sockets" in warm["done"], warm


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="lists the descriptors as Linux does")
def test_looking_through_the_descriptors_leaves_none_open():
    read, write = os.pipe()  # descriptors that are no sockets, among the process's
    try:
        before = sorted(os.listdir("/proc/self/fd"))
        for _ in range(20):
            startup.send_at_once()
        assert sorted(os.listdir("/proc/self/fd")) == before
    finally:
        os.close(read)
        os.close(write)

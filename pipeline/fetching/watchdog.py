"""A request's deadline kept wherever the request blocks: connecting, its headers, its body.

A socket timeout bounds one silence, not a request: a server that sends a byte of its
headers or its body every few seconds never trips it. The watchdog knows every socket the
client's session opens (its connection classes note them) and, once the deadline of the
request under way passes, shuts them down: the read blocked on one returns at once, and
the request fails naming its deadline.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import weakref
from typing import TYPE_CHECKING, Any

import urllib3
from requests.adapters import HTTPAdapter

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class Watchdog:
    """Shuts down the client's sockets when the deadline being watched passes."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._lock = threading.Lock()

    def add(self, sock: socket.socket) -> None:
        """Watch SOCK, a socket the session opened."""
        with self._lock:
            self._sockets.add(sock)

    @contextlib.contextmanager
    def watching(self, deadline: float) -> Iterator[None]:
        """Within the block, the sockets are shut down once the clock passes DEADLINE."""
        timer = threading.Timer(max(deadline - self._clock(), 0.0), self._fire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()

    def _fire(self) -> None:
        with self._lock:
            watched = list(self._sockets)
        for sock in watched:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


def adapter(watchdog: Watchdog) -> HTTPAdapter:
    """A requests adapter whose connections, HTTP and HTTPS, are watched by WATCHDOG."""

    class _Connection(urllib3.connection.HTTPConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            watchdog.add(sock)
            return sock

    class _Secure(urllib3.connection.HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()
            watchdog.add(sock)
            return sock

    class _Pool(urllib3.HTTPConnectionPool):
        ConnectionCls = _Connection

    class _SecurePool(urllib3.HTTPSConnectionPool):
        ConnectionCls = _Secure

    class _Adapter(HTTPAdapter):
        def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:  # noqa: ANN401 - requests' own
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = {"http": _Pool, "https": _SecurePool}

    return _Adapter()

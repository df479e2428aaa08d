"""Who told the stdio proxy to stop: SIGINT and SIGTERM, each with the process that sent it.

A stdio proxy's client is the process that started it (its parent: a stdio client spawns its
server), and a client that ends its server with SIGTERM instead of closing its stdin
(``@ai-sdk/mcp``'s ``close()``) is leaving, as if it had hung up: its calls in flight were
abandoned, not failed by a server shutting down. The kernel says who sent a signal (``si_pid``),
but only to a thread that takes it with ``sigwaitinfo``: a Python signal handler is not told.
So :meth:`SignalSenders.watch` blocks both signals in the calling thread before any other thread
exists (threads inherit the mask: no other thread can take them) and one thread of ours waits
for them, each handed to the listener (:meth:`SignalSenders.listen`) with its sender.

The server must not inherit the blocked mask: libuv (uvloop) empties a child's mask before it
executes it, :mod:`subprocess` (asyncio's own loop) does not. So the proxy watches only on
uvloop; elsewhere (asyncio's loop, macOS and Windows, which have no ``sigwaitinfo``), and when a
thread already runs, :attr:`SignalSenders.watching` is false and the relay takes the signals
with the loop's handlers, the sender unknown. A signal that comes while no one listens (before
the relay started, after it ended) does what it did without the watch.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

STOPS = (signal.SIGINT, signal.SIGTERM)
NO_SENDER = 0  # si_pid of a signal the kernel sent (a terminal's Ctrl-C)

Listener = Callable[[int, int], None]  # (the signal, its sender's pid)


class SignalSenders:
    """SIGINT and SIGTERM, with their sender, from a thread of its own (see the module)."""

    def __init__(self) -> None:
        self.watching = False
        self._parent = os.getppid()
        self._lock = threading.Lock()
        self._listener: Listener | None = None
        self._early: list[tuple[int, int]] = []  # what came before anyone listened

    @classmethod
    def watch(cls) -> SignalSenders:
        """Start watching, if this process can (see the module). Call it before any thread."""
        senders = cls()
        if not hasattr(signal, "sigwaitinfo") or threading.active_count() != 1:
            return senders
        signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
        threading.Thread(target=senders._wait, name="mcp-otel-signals", daemon=True).start()
        senders.watching = True
        return senders

    def from_client(self, sender: int) -> bool:
        """Whether ``sender`` is the client: the process that started this one, still its parent
        (one that exited leaves it to another, which is not the client)."""
        return sender != NO_SENDER and sender == self._parent == os.getppid()

    def listen(self, listener: Listener) -> None:
        """Hand each signal to ``listener``, in the watching thread (it hands it on to its
        loop), those that came before first."""
        with self._lock:
            self._listener = listener
            early, self._early = self._early, []
        for number, sender in early:
            listener(number, sender)

    def stop(self) -> None:
        """The relay is over: from now on a signal does what it would unwatched (the calling
        thread, the main one, takes it again)."""
        self.listen(unwatched)
        if self.watching:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)

    def _wait(self) -> None:
        while True:
            info = signal.sigwaitinfo(STOPS)
            with self._lock:
                listener = self._listener
                if listener is None:
                    self._early.append((info.si_signo, info.si_pid))
            if listener is not None:
                listener(info.si_signo, info.si_pid)


def unwatched(number: int, sender: int) -> None:
    """Take ``number`` as the process would unwatched: raised again in this thread, unblocked
    here, it meets the process's handler (SIGINT's KeyboardInterrupt in the main thread), or
    its default action (SIGTERM ends the process)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
    signal.pthread_kill(threading.get_ident(), number)

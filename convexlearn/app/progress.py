"""Progress of a long command on stderr, and the command's log handler.

Own implementation rather than tqdm or rich: the command shows one status line (what runs,
``[k/N]`` of the steps, the iteration where a method reports one, elapsed seconds), which is
~60 lines here, and neither library is a dependency of convexlearn today; a new hard
dependency for one line of text would not earn its place.

The line appears only on a terminal, only after ``delay`` seconds (short runs stay
silent), never with ``--quiet``; a background thread redraws it every ``interval``
seconds so that the elapsed time moves also while a solver runs without callbacks.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
import weakref

__all__ = ["Progress", "ProgressLogHandler", "configure_logging"]


class Progress:
    """One self-overwriting status line on stderr (see the module docstring).

    Call it with a message (``progress("smo: iteration 120")``), which starts the redraw
    thread; set ``step`` and ``total`` for the ``[k/N]`` prefix; :meth:`clear` (or
    :meth:`close`) removes the line and stops the thread until the next message.
    """

    def __init__(self, quiet: bool, delay: float = 2.0, interval: float = 0.2,
                 total: int | None = None):
        self.stream = sys.stderr                  # the terminal of this run, kept
        self.enabled = not quiet and self.stream.isatty()
        self.start, self.delay, self.interval = time.monotonic(), delay, interval
        self.last, self.shown = 0.0, False
        self.message, self.step, self.total = "", 0, total
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _start(self) -> None:
        if self.enabled and self._thread is None:
            self._stop.clear()
            # The thread holds the Progress weakly: one never closed (an exception path,
            # a test) stops redrawing once it is garbage.
            self._thread = threading.Thread(target=_redraw, daemon=True,
                                            args=(weakref.ref(self), self._stop,
                                                  max(self.interval, 0.05)))
            self._thread.start()

    def _halt(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            if thread is not threading.current_thread():
                thread.join(timeout=1.0)

    def _text(self, now: float) -> str:
        count = f"[{self.step}/{self.total}] " if self.total else ""
        return f"{count}{self.message}"[:100] + f" ({now - self.start:.0f} s elapsed)"

    def _draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or not self.message:
            return
        if not force and now - self.last < self.interval:
            return
        with self._lock:
            self.last, self.shown = now, True
            self.stream.write(f"\r\033[K{self._text(now)}")
            self.stream.flush()

    def __call__(self, message: str) -> None:
        self.message = message
        self._start()
        self._draw()

    def clear(self) -> None:
        """Remove the line and stop redrawing it until the next message."""
        self._halt()
        with self._lock:
            if self.shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self.shown = False

    def close(self) -> None:
        """Stop the redraw thread and clear the line."""
        self.clear()


def _redraw(ref: "weakref.ref[Progress]", stop: threading.Event, interval: float) -> None:
    while not stop.wait(interval):
        progress = ref()
        if progress is None:
            return
        progress._draw(force=True)
        del progress


class ProgressLogHandler(logging.StreamHandler):
    """Writes log records to stderr, clearing the progress line first."""

    def __init__(self, progress: Progress | None = None):
        super().__init__(sys.stderr)
        self.progress = progress
        self.setFormatter(logging.Formatter("convexlearn: %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self.progress is not None:
            self.progress.clear()
        super().emit(record)


def configure_logging(verbose: int, progress: Progress | None = None) -> None:
    """``-v``: INFO records of the ``convexlearn`` logger on stderr; ``-vv``: DEBUG; 0
    removes the command's handler and resets the level."""
    logger = logging.getLogger("convexlearn")
    for handler in [h for h in logger.handlers if isinstance(h, ProgressLogHandler)]:
        logger.removeHandler(handler)
    if verbose > 0:
        logger.addHandler(ProgressLogHandler(progress))
        logger.setLevel(logging.INFO if verbose == 1 else logging.DEBUG)
    else:
        logger.setLevel(logging.NOTSET)

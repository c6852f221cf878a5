"""Run a producer (a generator) on a background thread, `depth` items ahead of its consumer.

The items and their order are exactly the producer's: it runs on one thread, in order, so seeded shuffles give
the same result as a plain loop. What the consumer waited for is measured (`waited_s`), so a benchmark can tell
a loader that keeps up from one that stalls the training step.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Generic, TypeVar

T = TypeVar("T")
_DONE = object()


class Prefetch(Generic[T]):
    """`for item in Prefetch(gen, depth=2): …` — items of `gen`, computed ahead on a thread; the producer's exception
    is re-raised in the consumer; leaving the loop early stops the producer."""

    def __init__(self, producer: Iterator[T], depth: int = 2, name: str = "laya-prefetch"):
        self._producer = producer
        self._queue: queue.Queue = queue.Queue(maxsize=max(1, depth))
        self._stop = threading.Event()
        self.waited_s = 0.0  # seconds the consumer spent waiting for the next item
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _put(self, item) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _run(self) -> None:
        try:
            for item in self._producer:
                if not self._put((item, None)):
                    return
        except BaseException as err:  # handed to the consumer
            self._put((_DONE, err))
            return
        self._put((_DONE, None))

    def __iter__(self) -> Iterator[T]:
        try:
            while True:
                started = time.perf_counter()
                item, err = self._queue.get()
                self.waited_s += time.perf_counter() - started
                if item is _DONE:
                    if err is not None:
                        raise err
                    return
                yield item
        finally:
            self.close()

    def close(self) -> None:
        """Stop the producer and wait for its thread (idempotent)."""
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(timeout=0.05)
        close = getattr(self._producer, "close", None)
        if close is not None:
            close()

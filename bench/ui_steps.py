"""The UI thread's screen updates and layouts, timed in thread CPU (shared by the benches)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

#: Textual's ``Screen`` methods that make a frame: the update (which may lay out), and the layout.
STEPS = ("_on_timer_update", "_refresh_layout")


def timed_steps(owner: Any, names: tuple[str, ...] = STEPS) -> list[float]:  # noqa: ANN401 - Screen or its class
    """Wrap ``owner``'s methods ``names`` (on the class, or on one instance); the returned list
    gets the thread CPU seconds (``time.thread_time``) of each outermost call: a layout inside an
    update counts once, in it. Clear the list to start a count."""
    steps: list[float] = []
    depth = [0]

    def wrap(inner: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - whatever Textual's method takes
            t = time.thread_time()
            depth[0] += 1
            try:
                return inner(*args, **kwargs)
            finally:
                depth[0] -= 1
                if not depth[0]:
                    steps.append(time.thread_time() - t)

        return wrapper

    for name in names:
        setattr(owner, name, wrap(getattr(owner, name)))
    return steps

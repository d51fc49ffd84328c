"""The demo's stand-in: the made-up user whose standing the demo opens on when nobody is named
(``--user``), so the demo never shows the real user's name on made-up numbers. A module of its
own: the app's start reads it without importing the demo (numpy.random)."""

DEMO_STAND_IN = "alice"

"""The panes beside the tree: breakdown, allocations and what-if.

Each module defines one Widget with ``show(view, row)``; :mod:`tui.app.pane_slots` finds it.
Their numbers come from textual-free modules (:mod:`tui.explain`, :mod:`tui.alloc_view`,
:mod:`tui.whatif`); the panes only lay them out.
"""

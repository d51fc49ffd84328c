"""The panes beside the tree: breakdown, allocations and what-if.

Each module defines one Widget with ``show(standing, row)``; :data:`tui.app.app.PANES` lists them.
Their numbers come from :mod:`tui.analysis`; the panes only lay them out.
"""

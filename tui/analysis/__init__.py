"""UI-free answers the panes and the CLI show, computed from a snapshot and the engine."""

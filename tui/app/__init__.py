"""The Textual app: shell, association tree pane, and slots for the other panes."""

"""The one base class of every allocation error, cheap to import (the CLI catches it)."""

from __future__ import annotations


class AllocationError(Exception):
    """A ledger refusal, a store or service that did not answer: one line for the user."""

"""Widgets of the fairtop app."""

"""Screens of the fairtop app."""

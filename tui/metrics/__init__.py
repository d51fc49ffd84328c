"""``fairtop serve-metrics``: the snapshot as OpenMetrics for Prometheus (exposition, server)."""

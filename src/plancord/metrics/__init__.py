"""The optional Prometheus endpoint (``metrics:`` in the config): ``endpoint`` serves it,
``readings`` reads what it reports."""

from plancord.metrics.endpoint import MetricsEndpoint, PlancordCollector

__all__ = ["MetricsEndpoint", "PlancordCollector"]

"""The doctor's look at the metrics endpoint, when ``metrics.enabled``: the bot can bind its
address, or a running plancord already serves it there."""

from __future__ import annotations

import errno
import socket
import urllib.request

from plancord.config import Config
from plancord.doctor.findings import Check, failed, passed

PROBE_TIMEOUT_SECONDS = 2.0


def check_metrics(config: Config) -> Check | None:
    """None when the endpoint is off."""
    settings = config.metrics
    if not settings.enabled:
        return None
    where = f"{settings.host}:{settings.port}"
    url = f"http://{where}/metrics"
    fix = "change metrics.port or metrics.host, or set metrics.enabled: false"
    try:
        with socket.create_server((settings.host, settings.port)):
            pass
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            return failed("metrics", f"cannot listen on {where} ({exc.strerror or exc})", fix)
        if _serves_plancord(url):
            return passed(f"metrics: a running plancord serves {url}")
        return failed("metrics", f"{where} is taken by another program", fix)
    return passed(f"metrics: {where} is free; the bot serves {url} there")


def _serves_plancord(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=PROBE_TIMEOUT_SECONDS) as response:  # noqa: S310
            return b"plancord_agents" in response.read(1_000_000)
    except OSError:
        return False

"""The doctor's look at the metrics endpoint, when ``metrics.enabled``: the bot can bind its
address, or a running plancord already serves it there."""

from __future__ import annotations

import errno
import socket
import urllib.request

from plancord.config import Config
from plancord.doctor.findings import Check, failed, passed, warned

PROBE_TIMEOUT_SECONDS = 2.0

#: Hosts that bind every interface.
EVERY_INTERFACE = ("0.0.0.0", "::", "")  # noqa: S104 - what is warned of


def check_metrics(config: Config) -> list[Check]:
    """Nothing when the endpoint is off; a warning when it listens on every interface."""
    settings = config.metrics
    if not settings.enabled:
        return []
    found = [_check_bind(config)]
    if settings.host in EVERY_INTERFACE:
        found.append(
            warned(
                "metrics",
                f"metrics.host {settings.host or '(empty)'} listens on every interface: "
                "anyone who reaches the port reads agent names, costs and activity (no "
                "authentication)",
                "set metrics.host: 127.0.0.1 (or the address your Prometheus scrapes) and "
                "firewall the port",
            )
        )
    return found


def _check_bind(config: Config) -> Check:
    settings = config.metrics
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

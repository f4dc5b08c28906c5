"""One proxy request head, read strictly: the endpoint it names, and the head that goes on.

Why this exists: the proxy decides, resolves and connects by what a request names, so the
request is read once, by this parser, into one :class:`~plancord.core.host_names.Endpoint`;
nothing later reads the client's text again. ``CONNECT host:port`` names a tunnel (HTTPS);
an absolute ``http://`` URL names plain HTTP, whose head goes on in origin form with the
endpoint as its ``Host`` (a ``Host`` header naming anything else is refused: a granted
server must not answer as another of its virtual hosts). Anything else is a
:class:`BadRequest`, whose message the client is told: a bare CR, LF or NUL, a folded or
nameless header, an HTTP version other than 1.0 and 1.1, credentials in the URL, a host
that is not one (``core.host_names``), a port outside 1 to 65535.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plancord.core.host_names import Endpoint, HostProblem, parse_endpoint


class BadRequest(ValueError):
    """The client sent something that is not a proxy request we serve."""


@dataclass(frozen=True, slots=True)
class ProxyRequest:
    endpoint: Endpoint
    tunnel: bool
    head: bytes
    """For plain HTTP, the request head as it goes to the server (origin-form)."""


_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VERSIONS = (b"HTTP/1.0", b"HTTP/1.1")
_DROPPED = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive", b"host")
"""One request per connection: each is decided on its own (a kept-alive connection would
carry the next request to this host's server whatever it names, past a step)."""


def parse_head(head: bytes) -> ProxyRequest:
    """The request one proxy request head (up to and including the blank line) names."""
    if not head.endswith(b"\r\n\r\n"):
        raise BadRequest("a request head ends with an empty line")
    lines = head[:-4].split(b"\r\n")
    if any(b"\r" in line or b"\n" in line or b"\0" in line for line in lines):
        raise BadRequest("a bare CR, LF or NUL in the request head")
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[2] not in _VERSIONS or _TOKEN.fullmatch(parts[0]) is None:
        raise BadRequest("not an HTTP/1.0 or HTTP/1.1 request line")
    method, target, version = parts
    headers = [_header(line) for line in lines[1:]]
    if method == b"CONNECT":
        return ProxyRequest(_endpoint(target, None), True, b"")
    if target[:7].lower() != b"http://":
        raise BadRequest("a proxy request names an absolute http:// URL, or CONNECT for https")
    rest = target[7:]
    cut = min((rest.find(mark) for mark in (b"/", b"?") if mark in rest), default=len(rest))
    authority, path = rest[:cut], rest[cut:]
    if b"@" in authority:
        raise BadRequest("credentials in the URL are refused; send an Authorization header")
    if b"#" in path:
        raise BadRequest("a request target holds no fragment (#)")
    endpoint = _endpoint(authority, 80)
    _check_host_header(headers, endpoint)
    _check_framing(headers)
    kept = [b"%s: %s" % (name, value) for name, value in headers if name.lower() not in _DROPPED]
    origin = path if path.startswith(b"/") else b"/" + path
    rebuilt = [
        b"%s %s %s" % (method, origin, version),
        b"Host: " + endpoint.authority(80).encode("ascii"),
        *kept,
        b"Connection: close",
    ]
    return ProxyRequest(endpoint, False, b"\r\n".join(rebuilt) + b"\r\n\r\n")


def _header(line: bytes) -> tuple[bytes, bytes]:
    name, colon, value = line.partition(b":")
    if not colon or _TOKEN.fullmatch(name) is None:
        raise BadRequest("a header line is not name: value (folded lines are refused)")
    return name, value.strip(b" \t")


def _endpoint(authority: bytes, default_port: int | None) -> Endpoint:
    try:
        text = authority.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("the host named is not UTF-8") from None
    if not text:
        raise BadRequest("no host named")
    try:
        return parse_endpoint(text, default_port)
    except HostProblem as exc:
        raise BadRequest(str(exc)) from None


def _check_host_header(headers: list[tuple[bytes, bytes]], endpoint: Endpoint) -> None:
    """The ``Host`` header, when there is one, names the URL's own host and port."""
    named = [value for name, value in headers if name.lower() == b"host"]
    if len(named) > 1:
        raise BadRequest("more than one Host header")
    if not named:
        return
    try:
        claimed = _endpoint(named[0], 80)
    except BadRequest as exc:
        raise BadRequest(f"the Host header is not a host: {exc}") from None
    if claimed != endpoint:
        raise BadRequest(
            f"the Host header names {claimed.authority(80)}, the URL "
            f"{endpoint.authority(80)}; a request goes to the host it names"
        )


def _check_framing(headers: list[tuple[bytes, bytes]]) -> None:
    """One way to tell where the body ends (RFC 9112 §6.3: both is an error)."""
    lengths = {value for name, value in headers if name.lower() == b"content-length"}
    chunked = any(name.lower() == b"transfer-encoding" for name, _ in headers)
    if len(lengths) > 1 or (lengths and chunked):
        raise BadRequest("a request with two different body lengths")

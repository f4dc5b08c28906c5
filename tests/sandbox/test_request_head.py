"""A proxy request head read once, strictly: what it names, and what goes on to the server."""

from __future__ import annotations

import pytest

from plancord.core.host_names import DnsName, Endpoint
from plancord.sandbox.request_head import BadRequest, parse_head


def test_plain_http_goes_on_with_the_named_host_as_its_host_header() -> None:
    request = parse_head(b"GET http://Files.Test./a HTTP/1.1\r\nUser-Agent: t\r\n\r\n")
    assert request.endpoint == Endpoint(DnsName("files.test"), 80)
    assert request.head == (
        b"GET /a HTTP/1.1\r\nHost: files.test\r\nUser-Agent: t\r\nConnection: close\r\n\r\n"
    )


def test_a_matching_host_header_is_replaced_by_the_parsed_one() -> None:
    request = parse_head(b"GET http://files.test:8080?q HTTP/1.1\r\nHost: FILES.test.:8080\r\n\r\n")
    assert request.head == b"GET /?q HTTP/1.1\r\nHost: files.test:8080\r\nConnection: close\r\n\r\n"


@pytest.mark.parametrize(
    ("head", "why"),
    [
        (b"GET http://files.test/ HTTP/1.1\r\nHost: secret.internal\r\n\r\n", "Host header names"),
        (b"GET http://files.test/ HTTP/1.1\r\nHost: files.test:81\r\n\r\n", "Host header names"),
        (b"GET http://files.test/ HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", "more than one"),
        (b"GET http://files.test:99999/ HTTP/1.1\r\n\r\n", "not a port"),
        (b"GET http://[::1/ HTTP/1.1\r\n\r\n", "ends with ]"),
        (b"GET http://a\0.files.test/ HTTP/1.1\r\n\r\n", "NUL"),
        (b"CONNECT 198.51.100.7\0.files.test:443 HTTP/1.1\r\n\r\n", "NUL"),
        (b"CONNECT xn--zz.test:443 HTTP/1.1\r\n\r\n", "A-label"),
        (b"CONNECT \xff.test:443 HTTP/1.1\r\n\r\n", "UTF-8"),
        (b"CONNECT ::1:443 HTTP/1.1\r\n\r\n", "brackets"),
        (b"GET http://user:pw@files.test/ HTTP/1.1\r\n\r\n", "credentials"),
        (b"GET http://files.test/ HTTP/1.1\r\nX: a\nHost: b\r\n\r\n", "bare CR, LF"),
        (b"GET http://files.test/ HTTP/1.1\r\n folded\r\n\r\n", "folded"),
        (
            b"GET http://files.test/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "two",
        ),
        (b"GET /relative HTTP/1.1\r\n\r\n", "absolute"),
        (b"GET ftp://files.test/ HTTP/1.1\r\n\r\n", "absolute"),
        (b"CONNECT files.test HTTP/1.1\r\n\r\n", "no port"),
        (b"CONNECT :443 HTTP/1.1\r\n\r\n", "no host"),
        (b"HELLO\r\n\r\n", "request line"),
        (b"GET http://files.test/ HTTP/2\r\n\r\n", "request line"),
    ],
)
def test_a_malformed_head_is_a_bad_request_with_the_reason(head: bytes, why: str) -> None:
    with pytest.raises(BadRequest, match=why):
        parse_head(head)

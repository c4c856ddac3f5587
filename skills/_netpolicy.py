"""Network policy for skills that reach out: which URLs may be fetched, and pinned connections.

``check_url(url, allow_hosts)`` returns a one-line refusal reason, or None when the URL may be
fetched. Refused:

- any scheme but http and https; URLs with credentials (``user@host``), backslashes, control
  characters or whitespace, a percent sign in the host (all read differently by different URL
  parsers, so what was checked might not be what is connected);
- hosts that do not resolve (getaddrinfo, every address it returns is checked);
- hosts that resolve to a loopback, private, link-local, multicast, unspecified, reserved,
  shared (CGNAT, 100.64.0.0/10) or otherwise non-global address, including the IPv6 forms
  that embed one (IPv4-mapped ``::ffff:a.b.c.d``, IPv4-compatible ``::a.b.c.d``, NAT64
  ``64:ff9b::/96``, 6to4 ``2002::/16``, Teredo). Numeric spellings (``0x7f000001``,
  ``2130706433``, ``017700000001``, ``127.1``, ``[::1]``) are caught because the check runs on
  what the resolver returns, which is what a connection would use;
- ``localhost`` and its subdomains, and any name that resolves to such an address,

unless the host is listed in ``allow_hosts`` (names compared case-insensitively without a
trailing dot; an IP entry also matches every spelling of that address). Chosen where the spec
is silent: cloud metadata endpoints (169.254.169.254, fd00:ec2::254, 100.100.100.200,
metadata.google.internal, ...) are refused **even when listed**, since no skill needs them and
they hand out credentials; an entry names a host, never a port; an unresolvable host is a
refusal here (the caller cannot fetch it anyway).

Pinning (no DNS rebinding between check and connect): :func:`opener` builds a urllib opener
whose HTTP and HTTPS connections check the host **when they connect** and then connect only to
the addresses that passed the check (TLS still verifies the certificate and SNI against the
host name). Every redirect makes a new connection, so every hop is checked the same way, and
the redirect handler refuses non-http(s) targets. The opener has no proxy handler: a proxy
would resolve names itself, out of the check's sight.

Standard library only: skills import it like ``_protocol`` (from beside their directory), and
kernel code may import it as ``skills._netpolicy``.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
import urllib.request
from collections.abc import Collection, Iterable
from typing import Any
from urllib.parse import urljoin, urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ALLOWED_SCHEMES = ("http", "https")
MAX_REDIRECTS = 5

METADATA_HOSTS = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "metadata.azure.internal",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
    }
)
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, Oracle, DigitalOcean
        "169.254.169.123",  # AWS time sync
        "169.254.170.2",  # AWS ECS task metadata
        "169.254.169.250",  # Azure
        "168.63.129.16",  # Azure wire server (a public address)
        "100.100.100.200",  # Alibaba
        "192.0.0.192",  # Oracle (legacy)
        "fd00:ec2::254",  # AWS over IPv6
        "fd00:ec2::23",  # AWS time sync over IPv6
    )
)
CGNAT = ipaddress.ip_network("100.64.0.0/10")
NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")


class Refused(Exception):
    """A URL or connection the policy refuses; ``str(exc)`` is the one-line reason."""


class Unresolvable(Refused):
    """The host name does not resolve (a refusal: nothing was checked, nothing is connected)."""


def normalise_host(host: str) -> str:
    """Return ``host`` lower-cased, without brackets or a trailing dot, IDNA-encoded."""
    name = host.strip().strip("[]").rstrip(".").lower()
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise Refused(f"refused: {host!r} is not a valid host name") from None
    return name


def literal_address(host: str) -> IPAddress | None:
    """Return the address a numeric host spells (every IPv4 form inet_aton accepts), else None."""
    name = host.strip("[]")
    try:
        return ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        pass
    if name and all(c in "0123456789abcdefx." for c in name.lower()):
        try:  # 0x7f000001, 2130706433, 017700000001, 127.1, 0177.0.0.1
            return ipaddress.IPv4Address(socket.inet_aton(name))
        except OSError:
            return None
    return None


def embedded_ipv4(ip: IPAddress) -> list[ipaddress.IPv4Address]:
    """Return the IPv4 addresses inside an IPv6 one (mapped, compatible, NAT64, 6to4, Teredo)."""
    if not isinstance(ip, ipaddress.IPv6Address):
        return []
    found: list[ipaddress.IPv4Address] = []
    if ip.ipv4_mapped is not None:
        found.append(ip.ipv4_mapped)
    value = int(ip)
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d (deprecated IPv4-compatible form)
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if any(ip in net for net in NAT64):
        found.append(ipaddress.IPv4Address(value & 0xFFFFFFFF))
    if ip.sixtofour is not None:
        found.append(ip.sixtofour)
    if ip.teredo is not None:
        found.extend(ip.teredo)
    return found


def _kind(ip: IPAddress) -> str | None:
    """Name the non-public class of one address (not looking inside IPv6 forms), else None."""
    if ip in METADATA_ADDRESSES:
        return "a cloud metadata address"
    checks = (
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address"),
        (ip.is_multicast, "a multicast address"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in CGNAT, "a shared (CGNAT) address"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in THIS_NETWORK, "a this-network address"),
        (ip.is_private, "a private address"),
        (ip.is_reserved, "a reserved address"),
        (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local, "a site-local address"),
        (not ip.is_global, "not a public address"),
    )
    return next((label for hit, label in checks if hit), None)


def address_problem(ip: IPAddress) -> str | None:
    """Say why an address may not be connected to (itself or an IPv4 address inside it)."""
    for candidate in [*embedded_ipv4(ip), ip]:  # the embedded address names the real target
        kind = _kind(candidate)
        if kind is not None:
            inner = "" if candidate == ip else f" (it embeds {candidate})"
            return f"{ip} is {kind}{inner}"
    return None


def _listed(host: str, allow_hosts: Iterable[str]) -> bool:
    """Whether ``host`` (normalised) is on the allow list, by name or by address."""
    address = literal_address(host)
    for entry in allow_hosts:
        if not isinstance(entry, str) or not entry.strip():
            continue
        wanted = normalise_host(entry)
        if wanted == host:
            return True
        if address is not None and literal_address(wanted) == address:
            return True
    return False


def resolve(host: str, port: int) -> list[IPAddress]:
    """Return every address ``host`` resolves to (in the resolver's order, no duplicates)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise Unresolvable(f"refused: cannot resolve {host!r} ({reason})") from None
    found: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        ip = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if ip not in found:
            found.append(ip)
    if not found:
        raise Unresolvable(f"refused: {host!r} resolves to no address")
    return found


def vet_host(host: str, port: int, allow_hosts: Collection[str] = ()) -> list[IPAddress]:
    """Resolve ``host`` and return its addresses if the policy allows them; else raise Refused."""
    name = normalise_host(host)
    if not name:
        raise Refused("refused: the URL has no host")
    if "%" in name and literal_address(name) is None:
        raise Refused(f"refused: {host!r} has a percent sign in the host")
    if name in METADATA_HOSTS or name.endswith(".metadata.google.internal"):
        raise Refused(f"refused: {name} is a cloud metadata host")
    listed = _listed(name, allow_hosts)
    if not listed and (name == "localhost" or name.endswith(".localhost")):
        raise Refused(f"refused: {name} is the local machine (not in allow_hosts)")
    addresses = resolve(name, port)
    spelled = "" if literal_address(name) in addresses else f"{name} resolves to "
    for ip in addresses:
        if {ip, *embedded_ipv4(ip)} & METADATA_ADDRESSES:  # type: ignore[operator]
            what = f"{spelled}{ip}, " if spelled else f"{ip} is "
            raise Refused(f"refused: {what}a cloud metadata address (never fetched)")
    if listed:
        return addresses
    for ip in addresses:
        problem = address_problem(ip)
        if problem is not None:
            raise Refused(f"refused: {spelled}{problem} (not in allow_hosts)")
    return addresses


def _syntax(url: str) -> tuple[str, int]:
    """Return (host, port) of a URL whose form is unambiguous; else raise Refused."""
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        raise Refused("refused: the URL contains whitespace or control characters")
    if "\\" in url:
        raise Refused("refused: the URL contains a backslash")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused(f"refused: malformed URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        raise Refused(f"refused: {scheme or 'no'} scheme; only http and https URLs are fetched")
    if "@" in parts.netloc:
        raise Refused("refused: URLs with credentials (user@host) are not fetched")
    if not parts.hostname:
        raise Refused("refused: the URL has no host")
    return parts.hostname, port or (443 if scheme == "https" else 80)


def check(url: str, allow_hosts: Collection[str] = ()) -> list[IPAddress]:
    """Return the addresses ``url``'s host may be reached at, or raise :class:`Refused`."""
    host, port = _syntax(url)
    return vet_host(host, port, allow_hosts)


def check_url(url: str, allow_hosts: Collection[str] = ()) -> str | None:
    """Return a one-line reason why ``url`` may not be fetched, or None when it may."""
    try:
        check(url, allow_hosts)
    except Refused as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- pinned connections


def _connect_to(
    addresses: list[IPAddress],
    address: tuple[str, int],
    timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,  # type: ignore[attr-defined]
    source_address: Any = None,
) -> socket.socket:
    """Connect to the first reachable checked address (never re-resolving the name)."""
    last: OSError | None = None
    for ip in addresses:
        try:
            return socket.create_connection((str(ip), address[1]), timeout, source_address)
        except OSError as exc:
            last = exc
    raise last or OSError(f"cannot connect to {address[0]}")


class _Pinned:
    """Mixin: vet the host when connecting, then connect only to the vetted addresses."""

    allow_hosts: Collection[str] = ()
    host: str
    port: int

    def connect(self) -> None:
        """Check the host against the policy, pin its addresses, then connect."""
        addresses = vet_host(self.host, self.port, self.allow_hosts)
        self._create_connection = lambda address, timeout, source=None: _connect_to(
            addresses, address, timeout, source
        )
        super().connect()  # type: ignore[misc]


class PinnedHTTPConnection(_Pinned, http.client.HTTPConnection):
    """An HTTP connection checked by the policy and pinned to the checked addresses."""


class PinnedHTTPSConnection(_Pinned, http.client.HTTPSConnection):
    """An HTTPS connection checked by the policy and pinned (TLS still verifies the name)."""


class PinnedHTTPHandler(urllib.request.HTTPHandler):
    """urllib handler opening :class:`PinnedHTTPConnection` objects."""

    def __init__(self, allow_hosts: Collection[str] = ()) -> None:
        super().__init__()
        self.allow_hosts = tuple(allow_hosts)

    def _connection(self, host: str, **kwargs: Any) -> http.client.HTTPConnection:
        conn = PinnedHTTPConnection(host, **kwargs)
        conn.allow_hosts = self.allow_hosts
        return conn

    def http_open(self, req: urllib.request.Request) -> Any:
        """Open ``req`` over a checked, pinned connection."""
        return self.do_open(self._connection, req)  # type: ignore[arg-type]


class PinnedHTTPSHandler(urllib.request.HTTPSHandler):
    """urllib handler opening :class:`PinnedHTTPSConnection` objects."""

    def __init__(
        self, allow_hosts: Collection[str] = (), context: ssl.SSLContext | None = None
    ) -> None:
        super().__init__(context=context or ssl.create_default_context())
        self.allow_hosts = tuple(allow_hosts)

    def _connection(self, host: str, **kwargs: Any) -> http.client.HTTPSConnection:
        kwargs.pop("check_hostname", None)  # the default context checks host names
        conn = PinnedHTTPSConnection(host, **kwargs)
        conn.allow_hosts = self.allow_hosts
        return conn

    def https_open(self, req: urllib.request.Request) -> Any:
        """Open ``req`` over a checked, pinned TLS connection."""
        return self.do_open(self._connection, req, context=self._context)  # type: ignore[attr-defined,arg-type]


class CheckedRedirects(urllib.request.HTTPRedirectHandler):
    """Follow at most MAX_REDIRECTS redirects, only to http(s) URLs of unambiguous form.

    The target's address is checked when its connection opens (see :class:`_Pinned`).
    ``hops`` lists the URLs followed, for error messages.
    """

    max_redirections = MAX_REDIRECTS

    def __init__(self) -> None:
        super().__init__()
        self.hops: list[str] = []

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        """Refuse a redirect whose target is not an http(s) URL of unambiguous form."""
        target = urljoin(req.full_url, newurl)
        _syntax(target)
        self.hops.append(target)
        return super().redirect_request(req, fp, code, msg, headers, target)

    def http_error_302(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any
    ) -> Any:
        """Check the Location's scheme before urllib does (it raises a generic error)."""
        location = headers.get("location") or headers.get("uri") or ""
        scheme = urlsplit(urljoin(req.full_url, location)).scheme.lower()
        if scheme not in ALLOWED_SCHEMES:
            raise Refused(f"refused: redirect to a {scheme or 'schemeless'} URL")
        return super().http_error_302(req, fp, code, msg, headers)

    http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302


def opener(
    allow_hosts: Collection[str] = (), redirects: CheckedRedirects | None = None
) -> urllib.request.OpenerDirector:
    """Build a urllib opener speaking only checked, pinned HTTP and HTTPS (no proxy, no file:)."""
    director = urllib.request.OpenerDirector()
    for handler in (
        PinnedHTTPHandler(allow_hosts),
        PinnedHTTPSHandler(allow_hosts),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPErrorProcessor(),
        redirects or CheckedRedirects(),
    ):
        director.add_handler(handler)
    return director

"""skills/_netpolicy.py: which URLs a skill may fetch, checked on what the resolver returns.

Every host here is numeric or answered by /etc/hosts (``localhost``), so the tests need no DNS.
The attacks at the end were written after the policy, as spellings it was not tuned on.
"""

from __future__ import annotations

import pytest

from skills._netpolicy import address_problem, check_url, literal_address

REFUSED_BY_DEFAULT = [
    "http://127.0.0.1/admin",
    "http://127.0.0.1:8080/",
    "http://0x7f000001/",
    "http://2130706433/",
    "http://017700000001/",
    "http://127.1/",
    "http://[::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://localhost/",
    "http://LOCALHOST./",
    "http://0/",
    "http://0.0.0.0/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.1.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://[fe80::1]/",
    "http://[fc00::1]/",
    "http://[ff02::1]/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://metadata.google.internal/computeMetadata/v1/",
]


@pytest.mark.parametrize("url", REFUSED_BY_DEFAULT)
def test_netpolicy_refuses_local_private_and_metadata_addresses(url: str) -> None:
    reason = check_url(url)
    assert reason is not None and reason.startswith("refused: ")
    assert "\n" not in reason


@pytest.mark.parametrize(
    "url", ["http://93.184.215.14/", "https://8.8.8.8:443/x?q=1", "http://[2606:4700::1111]/"]
)
def test_netpolicy_allows_public_addresses(url: str) -> None:
    assert check_url(url) is None


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("http://127.0.0.1/", "loopback"),
        ("http://0x7f000001/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "embeds 127.0.0.1"),
        ("http://10.1.2.3/", "private"),
        ("http://100.64.0.1/", "CGNAT"),
        ("http://169.254.169.254/", "metadata"),
        ("http://[fe80::1]/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0/", "unspecified"),
        ("http://localhost/", "local machine"),
    ],
)
def test_netpolicy_reason_names_the_class(url: str, fragment: str) -> None:
    assert fragment in (check_url(url) or "")


@pytest.mark.parametrize(
    ("url", "fragment"),
    [
        ("file:///etc/passwd", "only http and https"),
        ("ftp://example.org/", "only http and https"),
        ("gopher://127.0.0.1:25/", "only http and https"),
        ("http://user:secret@93.184.215.14/", "credentials"),
        ("http://93.184.215.14\\@127.0.0.1/", "backslash"),
        ("http://93.184.215.14/a b", "whitespace"),
        ("http:///nohost", "no host"),
        ("http://nonexistent.invalid/", "cannot resolve"),
    ],
)
def test_netpolicy_refuses_ambiguous_or_unusable_urls(url: str, fragment: str) -> None:
    assert fragment in (check_url(url) or "")


def test_netpolicy_allow_hosts_lets_a_listed_host_through() -> None:
    assert check_url("http://127.0.0.1:8080/", ["127.0.0.1"]) is None
    # An IP entry matches every spelling of that address...
    assert check_url("http://0x7f000001:8080/", ["127.0.0.1"]) is None
    assert check_url("http://[::1]/", ["[::1]"]) is None
    # ...but not another name for it, nor another address.
    assert check_url("http://localhost/", ["127.0.0.1"]) is not None
    assert check_url("http://127.0.0.2/", ["127.0.0.1"]) is not None
    assert check_url("http://localhost/", ["LocalHost."]) is None


def test_netpolicy_metadata_stays_refused_even_when_listed() -> None:
    reason = check_url("http://169.254.169.254/latest/", ["169.254.169.254"])
    assert reason is not None and "metadata" in reason
    assert check_url("http://metadata.google.internal/", ["metadata.google.internal"])


# Spellings written after the policy was done (not tuned on): other encodings of the same hosts.
UNTUNED_ATTACKS = [
    "http://0x7f.0x0.0x0.0x1/",  # dotted hex
    "http://0177.0.0.01/",  # dotted octal
    "http://127.000.000.001/",  # zero-padded octal parts
    "http://0x7f.1/",  # two-part hex
    "http://3232235521/",  # 192.168.0.1 as one decimal
    "http://0300.0250.0.1/",  # 192.168.0.1 in octal
    "http://\u2460\u2461\u2466.0.0.1/",  # enclosed digits, NFKC-folded by IDNA to 127.0.0.1
    "http://\uff11\uff12\uff17.\uff10.\uff10.\uff11/",  # fullwidth digits
    "http://127\u30020\u30020\u30021/",  # ideographic full stops
    "http://%31%32%37.0.0.1/",  # percent-encoded host (urllib unquotes it)
    "http://[0:0:0:0:0:ffff:127.0.0.1]/",  # long IPv4-mapped form
    "http://[::ffff:7f00:1]/",  # IPv4-mapped in hex
    "http://[::127.0.0.1]/",  # deprecated IPv4-compatible
    "http://[64:ff9b::7f00:1]/",  # NAT64 of loopback
    "http://[2002:7f00:1::]/",  # 6to4 of loopback
    "http://[2002:a9fe:a9fe::]/",  # 6to4 of the metadata address
    "http://[::ffff:a9fe:a9fe]/",  # IPv4-mapped metadata address
    "http://[::]/",  # IPv6 unspecified
    "http://sub.localhost/",  # localhost subdomain
    "HTTP://127.0.0.1/",  # upper-case scheme
    "http://127.0.0.1:80@93.184.215.14/",  # userinfo confusion
]


@pytest.mark.parametrize("url", UNTUNED_ATTACKS)
def test_netpolicy_refuses_spellings_it_was_not_tuned_on(url: str) -> None:
    assert check_url(url) is not None


def test_netpolicy_numeric_forms_parse_like_the_resolver() -> None:
    assert str(literal_address("0x7f000001")) == "127.0.0.1"
    assert str(literal_address("017700000001")) == "127.0.0.1"
    assert literal_address("example.org") is None
    assert address_problem(literal_address("8.8.8.8")) is None  # type: ignore[arg-type]

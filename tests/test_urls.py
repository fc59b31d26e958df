"""The one URL check: what the workbench accepts as a peer's address, and how it splits it."""
import pytest

from transports.base import Url, parse_url


@pytest.mark.parametrize("text, url", [
    ("https://billing.acme.example/a2a", Url("https", "billing.acme.example", 443, "/a2a")),
    ("HTTP://Billing.Acme.Example", Url("http", "billing.acme.example", 80, "/")),
    ("http://127.0.0.1:8001/a2a/?x=1#top", Url("http", "127.0.0.1", 8001, "/a2a/?x=1")),
    ("http://[::1]:9/.well-known/agent-card.json", Url("http", "[::1]", 9, "/.well-known/agent-card.json")),
    ("http://localhost.:8001/a2a", Url("http", "localhost.", 8001, "/a2a")),  # a fully qualified name, kept so
    ("https://Billing.Acme.Example./", Url("https", "billing.acme.example.", 443, "/")),
])
def test_an_absolute_http_url_is_split_into_scheme_host_port_and_target(text, url):
    assert parse_url(text) == url


def test_the_origin_leaves_out_a_default_port_and_keeps_any_other():
    assert parse_url("https://billing.acme.example:443/a2a").origin == "https://billing.acme.example"
    assert parse_url("http://127.0.0.1:8001/a2a").origin == "http://127.0.0.1:8001"
    assert parse_url("http://127.0.0.1:8001/a2a?x=1").path == "/a2a"


@pytest.mark.parametrize("text", [
    None, 5, ["http://a/"], "", "billing.acme.example/a2a", "ftp://host/", "http://", "http:///a2a",
    "http://host:0/", "http://host:65536/", "http://host:12ab/", "http://user:pw@host/", "http://ho st/",
    "http://host/a b", "http://host/\x1b[2K", "http://h\u00e9st/", "http://host\u2028/", "http://[::1/",
    "http://-host/", "javascript:alert(1)", "http://a..b/a2a", "http://" + "a" * 64 + ".example/",
    "http://" + "a." * 127 + "example/", "http://./", "http://localhost../", "http://.localhost/",
])
def test_anything_else_is_not_a_url_the_workbench_will_use(text):
    assert parse_url(text) is None

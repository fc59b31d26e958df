"""Which way in a card offers we choose (credentials.choose), when one asks for two credentials in one
header (two in Authorization, two API keys of one name), which no one request can carry (14a7b3c).

Such a way is never chosen; its refusal must say why. When every way is of that kind it does; when
one we hold is of that kind and another is one we do not hold, the line said only "the support agent
holds none for URL": false (we hold the client credentials the first way names) and silent on the
reason nothing is sent. In process, no frame: choose() decides before any token is fetched."""
import pytest

from peers.a2a.model import AgentCard, SecurityScheme
from peers.support.calling.credentials import choose
from peers.support.calling.held import Held, Unheld

URL = "http://127.0.0.1:1/a2a"
TOKEN_URL = "http://127.0.0.1:1/token"
FIRST, SECOND = (SecurityScheme(name, "oauth2", token_url=TOKEN_URL) for name in ("oauth-a", "oauth-b"))
BEARER = SecurityScheme("bearer", "http", scheme="Bearer")
KEY, MTLS = SecurityScheme("key", "apiKey", key_name="X-API-Key"), SecurityScheme("mtls", "mutualTLS")


def card(*ways):
    schemes = (FIRST, SECOND, BEARER, KEY, MTLS)
    return AgentCard("c", "", URL, "1", (), auth_schemes=tuple(s.name for s in schemes), security_schemes=schemes,
                     security_requirements=tuple(dict.fromkeys(way, ()) for way in ways))


def test_a_held_way_two_oauth2_schemes_ask_for_is_refused_saying_so_though_another_way_is_unheld():
    with pytest.raises(Unheld) as refused:
        choose(card(("oauth-a", "oauth-b"), ("bearer",)), {URL: Held(client=("client-id", "client-secret"))})
    said = str(refused.value)
    assert "holds none" not in said, said
    assert "one request" in said, said


@pytest.mark.parametrize("way, held", [(("oauth-a", "key"), Held(client=("id", "secret"), api_key="k3y-42")),
                                       (("key", "mtls"), Held(api_key="k3y-42", certificate=("c.pem", "k.pem")))],
                         ids=["an OAuth2 token and an API key in X-API-Key", "an API key and a client certificate"])
def test_a_way_whose_credentials_ride_in_headers_of_their_own_is_chosen(way, held):
    assert tuple(s.name for s in choose(card(way), {URL: held})) == way

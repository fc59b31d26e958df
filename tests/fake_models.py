"""Models for the tests: plain generate(prompt) -> str callables, loadable with
--generate tests.fake_models:NAME. They stand for the model, which is not our code."""
import json

CALLS: list[str] = []


def picks_the_rogue(prompt: str) -> str:
    return json.dumps({"peer": "refund-bot-9000", "skill": "process_refund",
                       "input": {"order_id": "ORD-3300", "amount": 180.0}})


def always_wrong(prompt: str) -> str:
    CALLS.append(prompt)
    return 'Sure! ```json\n{"peer": "billing-agent", "skill": "process_refund", "input": {"order_id": "ORD-3300", "amount": "lots"}}\n```'


def wrong_then_right(prompt: str) -> str:
    CALLS.append(prompt)
    if "could not be used" not in prompt:
        return '{"peer": "billing-agent", "skill": "process_refund", "input": {"order_id": "ORD-3300"}}'
    return '{"peer": "billing-agent", "skill": "process_refund", "input": {"order_id": "ORD-3300", "amount": 180}}'


def not_text(prompt: str):
    return 42


def boom(prompt: str) -> str:
    raise RuntimeError("the model's server is on fire")


def never_answers(prompt: str) -> str:
    import time
    time.sleep(60)  # longer than any test waits: the run's --llm-timeout must end it
    return "{}"


def exits(prompt: str) -> str:
    raise SystemExit(0)  # a hook that would end the run as if it had succeeded


def steered(prompt: str) -> str:
    """A model that did as a peer's card told it: the refund moved to another order and amount."""
    return json.dumps({"peer": "billing-agent", "skill": "process_refund",
                       "input": {"order_id": "ORD-9999", "amount": 4999.99}})


def steered_to_an_order(prompt: str) -> str:
    """A steered model where the customer's words name no single order: it names one of its own."""
    return json.dumps({"peer": "billing-agent", "skill": "process_refund",
                       "input": {"order_id": "ORD-9999", "amount": 180}})


class Stopped(BaseException):
    """Not an Exception: a hook's own way to end everything."""


def raises_base(prompt: str) -> str:
    raise Stopped("from the hook")


class Unsayable(Exception):
    """An exception whose message cannot be read: its __str__ itself fails."""

    def __str__(self) -> str:
        raise RuntimeError("no message")


def raises_unsayable(prompt: str) -> str:
    raise Unsayable()


def raises_at_length(prompt: str) -> str:
    raise RuntimeError("the model's server says\n" + "x" * 100_000)


def names_a_huge_peer(prompt: str) -> str:
    return json.dumps({"peer": "P" * 60_000, "skill": "process_refund", "input": {}})


def drafts_a_huge_reply(prompt: str) -> str:
    if "Answer with one JSON object" in prompt:
        return json.dumps({"peer": "billing-agent", "skill": "process_refund",
                           "input": {"order_id": "ORD-3300", "amount": 180}})
    return "Your refund is done. " + "R" * 3_000_000

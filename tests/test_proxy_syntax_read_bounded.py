"""The proxy judges whether a success's body is JSON (annotate._not_json, JSONRPC-FMT-002) and the
agent writes that body: its read must stay within the limits every other read of a peer's JSON has
(transports/codec.py Limits: "kept in memory without amplification"). The quick syntax read (the C
scanner, ddf6947) has none: a 1 MiB answer of 349,000 empty objects is built whole, some 26 MB and
ten times the CPU of the strict read it replaced, which stops at max_containers. Not a timing: the
memory is counted (tracemalloc), the same from run to run."""
import tracemalloc

from peers.support.proxy.annotate import Answer, notes

BODY = b'{"jsonrpc": "2.0", "id": 1, "result": [' + b",".join([b"{}"] * 100_000) + b"]}"


def test_a_hundred_thousand_empty_objects_in_a_success_are_judged_without_building_them_all():
    answer = Answer("JSONRPC", b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}', 200,
                    "application/json", BODY)
    tracemalloc.start()
    try:
        found = notes(answer)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not [line for line in found if "not JSON" in line], found
    assert peak < 8 * len(BODY), f"{peak / 1e6:.1f} MB held to judge a {len(BODY) / 1e6:.1f} MB body"

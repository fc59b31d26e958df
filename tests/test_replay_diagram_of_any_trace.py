"""`--replay FILE --diagram OUT` draws whatever trace it is given: a trace file is input, and
one a person edited, or another tool wrote, may hold a line record of a kind no run prints
(here `"line": ""`, and the same after a step). It is drawn, or refused in one line with
exit status 2, never a traceback.

A hostile round's finding (a seeded mutation of real traces found it; these are its
smallest cases)."""
import json

import pytest

from conftest import cli, cli_process

TRACES = {
    "a line of no kind first": [{"kind": "line", "line": "", "text": "hello"}],
    "two lines of no kind": [{"kind": "line", "line": "", "text": "a"}, {"kind": "line", "line": "", "text": "b"}],
}


@pytest.mark.parametrize("suffix", [".svg", ".mmd", ".html"])
@pytest.mark.parametrize("name", list(TRACES))
def test_any_trace_is_drawn_or_refused_in_one_line(tmp_path, name, suffix):
    trace, drawn = tmp_path / "run.jsonl", tmp_path / ("run" + suffix)
    trace.write_text("".join(json.dumps(record) + "\n" for record in TRACES[name]))
    done = cli("--replay", str(trace), "--diagram", str(drawn))
    assert "Traceback" not in done.stdout + done.stderr
    assert done.returncode in (0, 2), (done.returncode, done.stderr[-300:])
    assert done.returncode == 0 and drawn.exists() or len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("suffix, seconds", [(".mmd", 30), (".html", 40)])
def test_a_trace_of_frames_to_as_many_hosts_as_a_trace_may_hold_is_drawn_in_seconds(tmp_path, suffix, seconds):
    """Each lane's name was counted against every other lane's (is it on two lanes?): a trace of
    40,000 frames, each to a host of its own (9 MB, well within a trace's limits), took 29 s to
    draw as Mermaid and 33 s as the page, four times as long for each doubling; the limit of
    100,000 records made some three minutes. A trace is input: it is drawn in time linear in it."""
    trace, drawn = tmp_path / "run.jsonl", tmp_path / ("run" + suffix)
    frames = ({"seq": n, "kind": "frame", "direction": "-->", "peer": f"p{n}", "origin": f"http://h{n}.example",
               "transport": "http", "wire": "1.0", "method": "SendMessage", "http_method": "POST",
               "url": f"http://h{n}.example/a2a", "body": "{}"} for n in range(50_000))
    trace.write_text("".join(json.dumps(record) + "\n" for record in frames))
    done = cli_process("--replay", str(trace), "--diagram", str(drawn), timeout=seconds)
    assert done.returncode == 0 and drawn.exists(), done.stderr[-300:]


@pytest.mark.parametrize("suffix", [".svg", ".mmd", ".html"])
def test_a_stream_frame_holding_a_lone_surrogate_is_drawn(tmp_path, suffix):
    """JSON spells a lone surrogate ("\\ud800"), which no UTF-8 holds: a stream's body holding one made the drawing
    fail, the whole trace refused as "'utf-8' codec can't encode character"."""
    trace, drawn = tmp_path / "run.jsonl", tmp_path / ("run" + suffix)
    stream = 'data: {"jsonrpc": "2.0", "id": 1, "result": {"task": {"id": "t", "status": {"state": "x\ud800"}}}}\n\n'
    trace.write_text(json.dumps({"seq": 1, "kind": "frame", "direction": "<--", "peer": "p", "origin": "http://h.example",
                                 "transport": "http", "wire": "1.0", "method": "SendStreamingMessage",
                                 "http_method": "POST", "url": "http://h.example/a2a", "http_status": 200,
                                 "body": stream}) + "\n")
    done = cli("--replay", str(trace), "--diagram", str(drawn))
    assert done.returncode == 0 and drawn.exists(), done.stderr[-300:]

"""A proxy's --trace, for a session that runs for days, keeps its newest records, bounded in number
and in characters (headers too), and says once, then every tenth of its cap, how many older went.
What it writes is a trace --replay reads."""
import os
import sys
from contextlib import contextmanager
from types import SimpleNamespace

import pytest

from conftest import ROOT, Child

from peers.support.learner import trace
from peers.support.learner.trace import Recorder
from peers.support.proxy import run
from peers.support.proxy.faults import Faults
from proxy_helpers import TLS_FLAGS, Lines, billing_served
from transports import printer
from transports.network import HttpTransport

ASK = b'{"jsonrpc": "2.0", "id": 5, "method": "GetTask", "params": {"id": "t-%d"}}'


@contextmanager
def traced_proxy():
    """A proxy before a served billing peer, as `proxy --trace` builds it: (its URL, its Lines, its Recorder)."""
    lines, recorder = Lines(), Recorder("HTTP through the proxy")
    with billing_served() as agent:
        settings = SimpleNamespace(to=agent, port=0, verbose=False, keep_card=False, timeout=5.0, step=False, allow_host=(),
                                   webhook=False, **dict.fromkeys(TLS_FLAGS))
        server, lines.app, upstream = run.build(settings, lines, Faults([]), recorder)
        server.start()
        try:
            yield server.base_url, lines, recorder
        finally:
            server.stop()
            upstream.close()


def test_a_long_proxied_session_traces_its_newest_records_and_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(run, "MOST_TRACED", 40)
    monkeypatch.setattr(printer, "MOST_FRAMES_KEPT", 20)
    with traced_proxy() as (proxy, lines, recorder):
        client = HttpTransport(timeout=5)
        for n in range(60):  # 120 frames and their lines: three times the 40 kept
            client.post(proxy + "/a2a", ASK % n, {"Content-Type": "application/json", "X-Padding": "p" * 2000})
    assert len(recorder.records) <= 40
    assert len(lines.app.printer.frames) <= 21  # and the printer, beside it, keeps its own frames bounded
    frames = [record for record in recorder.records if record["kind"] == "frame"]
    assert b"t-59" in frames[-1]["body"].encode() or b"t-59" in frames[-2]["body"].encode()  # the newest kept
    said = [line for line in lines.lines if line.startswith("[proxy] --trace keeps the newest 40 records")]
    assert 1 <= len(said) <= 30 and said[0].endswith("older frames and lines were dropped"), said
    recorder.write(str(tmp_path / "t.jsonl"))
    assert len(trace.load(str(tmp_path / "t.jsonl"))) == len(recorder.records)


def test_headers_count_toward_what_a_trace_keeps(monkeypatch):
    monkeypatch.setattr(run, "MOST_TRACED_BYTES", 64 << 10)
    with traced_proxy() as (proxy, lines, recorder):
        for n in range(30):  # each request with 8 KiB of headers and a tiny body
            HttpTransport(timeout=5).post(proxy + "/a2a", ASK % n, {
                "Content-Type": "application/json", **{f"X-Pad-{i}": "h" * 1000 for i in range(8)}})
    kept = sum(len(name) + len(value) for record in recorder.records for name, value in (record.get("headers") or {}).items())
    assert kept <= 64 << 10
    assert any("--trace keeps the newest" in line for line in lines.lines)



def test_urls_count_toward_what_a_trace_keeps(monkeypatch):
    """A record's URL was not counted: 10,000 records of 8 KiB URLs were 80 MiB kept, and a file --replay refuses."""
    monkeypatch.setattr(run, "MOST_TRACED_BYTES", 64 << 10)
    with traced_proxy() as (proxy, lines, recorder):
        client = HttpTransport(timeout=5)
        for n in range(30):  # each request to a 7 KiB URL, with a tiny body
            client.post(f"{proxy}/a2a?n={n}&pad={'p' * 7000}", ASK % n, {"Content-Type": "application/json"})
    assert sum(len(record.get("url") or "") for record in recorder.records) <= 64 << 10
    assert any("--trace keeps the newest" in line for line in lines.lines)


def test_a_traced_session_to_ever_new_urls_remembers_only_the_newest_urls_asked(monkeypatch):
    """A response is named by the request last sent to its URL, so a trace remembers what each URL was asked:
    it remembered every URL, for ever, so a client naming a new query with each request (a cache-buster, or
    one meaning to) grew a traced proxy by that URL a request, past every bound its records keep (6 KB URLs:
    +6 MB a thousand requests). The newest URLs alone are remembered; the newest request's answer is named."""
    monkeypatch.setattr(trace, "MOST_ASKED", 20)
    with traced_proxy() as (proxy, lines, recorder):
        client = HttpTransport(timeout=5)
        for n in range(60):  # each to a URL of its own
            client.post(f"{proxy}/a2a?n={n}", ASK % n, {"Content-Type": "application/json"})
    assert len(recorder._asked) <= 20, len(recorder._asked)
    answers = [record for record in recorder.records if record["kind"] == "frame" and record["direction"] == "<--"]
    assert answers[-1]["method"] == "GetTask" and answers[-1]["url"].endswith("/a2a?n=59"), answers[-1]

def test_what_a_traced_session_remembers_each_url_was_asked_is_bounded_in_bytes_however_long_the_urls_and_methods(
        monkeypatch):
    """MOST_ASKED bounds the URLs remembered by number alone: 8 KiB URLs made its thousand ~8 MiB, more than a
    session keeps of its records (keeping.MOST_RECORD_BYTES, 4 MiB), and a method a client spelled as a long list
    was kept whole with its URL. They are bounded in bytes too (here 64 KiB: 30 requests of 7-30 KiB each)."""
    import json
    monkeypatch.setattr(trace, "MOST_ASKED_BYTES", 64 << 10, raising=False)
    with traced_proxy() as (proxy, lines, recorder):
        client = HttpTransport(timeout=5)
        for n in range(30):  # each to a URL of its own: half long, half asking a "method" 30 KB long
            long = n % 2 == 0
            asked = ASK % n if long else json.dumps({"jsonrpc": "2.0", "id": n, "method": ["m" * 1000] * 30}).encode()
            client.post(f"{proxy}/a2a?n={n}&pad={'p' * 7000 if long else ''}", asked, {"Content-Type": "application/json"})
        client.post(f"{proxy}/a2a?n=last", ASK % 99, {"Content-Type": "application/json"})
    remembered = sum(len(json.dumps([url, *asked])) for url, asked in recorder._asked.items())
    assert remembered <= 64 << 10, remembered
    answers = [record for record in recorder.records if record["kind"] == "frame" and record["direction"] == "<--"]
    assert answers[-1]["method"] == "GetTask" and answers[-1]["url"].endswith("/a2a?n=last"), answers[-1]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full, a file every write to fails")
def test_a_trace_the_stopped_proxy_cannot_write_is_said_and_its_exit_status_is_2():
    """Said, but the exit status was 0, as if the trace a script asked for were there."""
    proxy = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "proxy", "--to", "http://127.0.0.1:9",
                   "--trace", "/dev/full"], stderr=-1)
    proxy.until("Ctrl-C or SIGTERM stops it")
    _, err = proxy.stop()
    assert "--trace /dev/full: not written (No space left on device)" in err
    assert proxy.returncode == 2 and "Traceback" not in err


def test_proxy_help_says_trace_keeps_the_newest_records_to_the_file_named():
    """--help said --trace writes "every frame and line to FILE.jsonl": it keeps a session's newest
    records (as many as run.MOST_TRACED, of run.MOST_TRACED_BYTES), in the file named as given."""
    from conftest import cli
    done = cli("proxy", "--help")
    said = " ".join(done.stdout.split())
    assert done.returncode == 0 and "every frame and line" not in said and "FILE.jsonl" not in said
    assert f"newest {run.MOST_TRACED:,} records ({run.MOST_TRACED_BYTES >> 20} MiB" in said


def test_the_method_each_frame_names_counts_toward_what_a_trace_keeps(tmp_path, monkeypatch):
    """A frame's record names its request's method, its answer's too, and neither was counted: a client's method
    of 3,000 characters was kept twice more for each request, uncounted, and a session's --trace file, each such
    character written as 6 (\\u00e9), was three times the size --replay was sized for (MAX_TRACE_CHARS)."""
    import json
    monkeypatch.setattr(run, "MOST_TRACED_BYTES", 64 << 10)
    with traced_proxy() as (proxy, lines, recorder):
        client = HttpTransport(timeout=5)
        for n in range(30):
            asked = json.dumps({"jsonrpc": "2.0", "id": n, "method": "\u00e9" * 3000}, ensure_ascii=False).encode()
            client.post(f"{proxy}/a2a", asked, {"Content-Type": "application/json"})
    kept = sum(len(record[key]) for record in recorder.records for key in ("body", "text", "url", "method", "jsonrpc_id")
               if isinstance(record.get(key), str))
    assert kept <= 64 << 10, f"{kept:,} characters kept past the 64 KiB bound"
    assert any("--trace keeps the newest" in line for line in lines.lines)

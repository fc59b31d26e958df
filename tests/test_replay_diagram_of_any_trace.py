"""`--replay FILE --diagram OUT` draws whatever trace it is given: a trace file is input, and
one a person edited, or another tool wrote, may hold a line record of a kind no run prints
(here `"line": ""`, and the same after a step). It is drawn, or refused in one line with
exit status 2, never a traceback.

A hostile round's finding (a seeded mutation of real traces found it; these are its
smallest cases)."""
import json

import pytest

from conftest import cli

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

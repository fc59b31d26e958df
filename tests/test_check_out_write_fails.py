"""`check --out FILE` where the report cannot be written after the run (the disk full: Linux's
/dev/full accepts the open and refuses every write): one line saying why, exit status 2,
never a traceback. (A path that cannot be opened at all is refused before any frame is sent.)"""
import os

import pytest

from conftest import cli, outside_peer
from test_check_deep_broken_agents import Agent, Tasks


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux), a file every write to fails")
def test_a_report_the_disk_refuses_is_one_line_and_exit_status_2():
    with outside_peer(Agent, tasks=Tasks(None)) as base:
        done = cli("check", base, "--out", "/dev/full", "--timeout", "2")
    assert "Traceback" not in done.stdout + done.stderr and done.returncode == 2
    assert done.stderr.strip().splitlines() == ["error: check: --out /dev/full: No space left on device"]

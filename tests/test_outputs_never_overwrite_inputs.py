"""A file a run writes (--trace, --diagram; check's --out) that is a file the same run reads
(--allowlist, --registry, --credentials) is a slip of the keyboard: refused before anything is
sent, in one line with exit status 2, rather than the trust list or the credential store
silently replaced by a trace or a report (the next run then fails on a file the user never
meant to touch, and the credentials are gone).

A hostile round's finding: in-process demo peers for the run; for `check`, a server of the
test's own on 127.0.0.1, port 0."""
import json
import shutil

import pytest

from conftest import ROOT, OutsidePeer, agent_card, cli, outside_peer


@pytest.mark.parametrize("written", ["--trace", "--diagram"])
@pytest.mark.parametrize("read", ["--allowlist", "--registry"])
def test_a_run_does_not_write_over_a_file_it_reads(tmp_path, read, written):
    source = ROOT / ("allowlist.json" if read == "--allowlist" else "registry.json")
    both = tmp_path / ("same.svg" if written == "--diagram" else "same.json")
    shutil.copy(source, both)
    done = cli(read, str(both), written, str(both), "--quiet")
    assert both.read_text() == source.read_text(), f"{written} wrote over the file {read} names"
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


class Agent(OutsidePeer):
    def do_GET(self):
        self.send(200, agent_card(f"http://127.0.0.1:{self.server.server_port}"))

    def do_POST(self):
        self.reply({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": "Task not found"}})


def test_check_does_not_write_its_report_over_its_credentials(tmp_path):
    store = tmp_path / "credentials.json"
    with outside_peer(Agent) as base:
        kept = json.dumps({"tokens": {base: "a-token-of-ours"}})
        store.write_text(kept)
        done = cli("check", base, "--credentials", str(store), "--out", str(store), "--timeout", "2")
    assert store.read_text() == kept, "check's --out wrote its report over the --credentials file"
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr

"""A run checks its TLS files (--ca, a client certificate in --credentials) as it begins, and
reads them again when it makes its HTTPS transport; a file changed in between (by an editor,
a deploy, another program) is one line and exit status 2 too, never a traceback.

A hostile round's finding: removing the --ca file some 0.2 s into `--transport https` ended
the run in a ConfigError's traceback. Here the change is made at a fixed point: by the
--generate hook's module as it is loaded, after the files were checked and before the
transport is made."""
import json
import shutil

import pytest

from conftest import ROOT, cli

KEYS = ROOT / "peers" / "keys"
REQUEST = "Please refund $180 on order ORD-3300"


def spoiling(tmp_path, victim):
    """A model module whose loading writes over `victim`, then answers as the offline stand-in."""
    hook = tmp_path / "spoiler.py"
    hook.write_text(f"open({str(victim)!r}, 'w').write('no longer a PEM file')\n"
                    "from peers.support.model.generate import stand_in as generate\n")
    return f"{hook}:generate"


@pytest.mark.parametrize("which", ["--ca", "a client certificate"])
def test_a_tls_file_spoiled_after_it_was_checked_is_one_line_and_exit_2(tmp_path, which):
    ca, certificate, key = (tmp_path / name for name in ("ca.pem", "cert.pem", "key.pem"))
    shutil.copy(KEYS / "demo-ca.DEMO-CERT.pem", ca)
    shutil.copy(KEYS / "billing-agent.DEMO-TLS-CERT.pem", certificate)
    shutil.copy(KEYS / "billing-agent.DEMO-TLS-KEY.pem", key)
    store = tmp_path / "credentials.json"
    store.write_text(json.dumps({"credentials": {"https://billing.acme.example/a2a": {
        "clientCertificate": {"certificate": str(certificate), "key": str(key)}}}}))
    victim = ca if which == "--ca" else certificate
    done = cli("--transport", "https", "--ca", str(ca), "--credentials", str(store), "--request", REQUEST,
               "--generate", spoiling(tmp_path, victim))
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr[-600:]
    assert str(victim) in done.stderr and "cannot use" in done.stderr
    assert "-->" not in done.stdout, "nothing was sent"

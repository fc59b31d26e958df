"""Every sentence a lesson prints is true of what the code enforced in that run: lessons run
against allowlists and registries a learner has edited, or with flags that change what
happens, say what happened, not what happens in the default run. Each test drives the real
lesson through the CLI."""
import json

from conftest import cli


def written(tmp_path, name, document):
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def empty_allowlist(tmp_path):
    return written(tmp_path, "allowlist.json", {"trusted": []})


def test_auth_schemes_says_it_vets_billing_itself_and_gates_each_host_before_any_refund_frame(tmp_path):
    done = cli("--scenario", "auth-schemes", "--allowlist", empty_allowlist(tmp_path), timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    vets = [n for n, line in enumerate(lines) if line.startswith("[support] this lesson vets billing-agent itself")]
    assert vets and "whatever allowlist.json says" in lines[vets[0]]
    first_trust = next(n for n, line in enumerate(lines) if line.startswith("[trust] "))
    assert vets[0] < first_trust
    for start, line in enumerate(lines):  # at each host: the gate, then every refund frame to it
        if line.startswith("--> GET ") and line.endswith("/.well-known/agent-card.json"):
            rest = lines[start + 1:]
            end = next((n for n, later in enumerate(rest) if later.startswith("--> GET ")), len(rest))
            here = rest[:end]
            gate = next(n for n, later in enumerate(here) if later.startswith("[trust] "))
            assert not any(later.startswith("--> {") for later in here[:gate]), line
    assert "whatever allowlist.json says" in cli("--scenario", "auth-schemes", "--help").stdout



def test_crash_says_it_vets_its_own_billing_whatever_the_allowlist_says(tmp_path):
    done = cli("--scenario", "crash", "--allowlist", empty_allowlist(tmp_path), timeout=60)
    lines = done.stdout.splitlines()
    trust = next(n for n, line in enumerate(lines) if line.startswith("[trust] "))
    vets = [n for n, line in enumerate(lines) if line.startswith("[support] this lesson vets billing-agent at ")]
    assert vets and vets[0] < trust and "whatever allowlist.json says" in lines[vets[0]]
    assert "whatever allowlist.json says" in cli("--scenario", "crash", "--help").stdout

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



def test_auth_schemes_says_our_store_holds_a_credential_only_where_it_holds_one_the_card_asks_for(tmp_path):
    """A --credentials entry for a host (here a user and password where the card asks for an API key, and
    an API key where it asks for a password) stands in for the demo's: the lesson said "our store holds an
    API key for it" from its own table, and the line under it said the support agent holds none."""
    store = written(tmp_path, "credentials.json", {"credentials": {
        "https://apikey.billing.acme.example/a2a": {"basic": "support-agent:pw"},
        "https://basic.billing.acme.example/a2a": {"apiKey": "a-key"}}})
    done = cli("--scenario", "auth-schemes", "--credentials", store, timeout=60)
    said = [line for line in done.stdout.splitlines() if line.startswith("[support] billing at https://")]
    assert len(said) == 5 and "our store holds an API key" not in said[0], said[0]
    assert "holds none for https://apikey.billing.acme.example/a2a" in said[0], said[0]
    assert "a user and password from our own store" not in said[1], said[1]
    assert "Our store holds nothing it asks for" in said[1] and "holds none for https://basic." in said[1], said[1]
    assert said[2].endswith("with an OAuth2 client id and secret from our own store:"), "the demo's store, elsewhere"
    assert "with the credential from our own store" not in done.stdout, "no credential was sent at the first host"
    assert done.returncode == 1


def test_crash_says_it_vets_its_own_billing_whatever_the_allowlist_says(tmp_path):
    done = cli("--scenario", "crash", "--allowlist", empty_allowlist(tmp_path), timeout=60)
    lines = done.stdout.splitlines()
    trust = next(n for n, line in enumerate(lines) if line.startswith("[trust] "))
    vets = [n for n, line in enumerate(lines) if line.startswith("[support] this lesson vets billing-agent at ")]
    assert vets and vets[0] < trust and "whatever allowlist.json says" in lines[vets[0]]
    assert "whatever allowlist.json says" in cli("--scenario", "crash", "--help").stdout


BILLING_ONLY_ELSEWHERE = {"trusted": [{"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}]}
ROGUE_FIRST = {"peers": [{"cardUrl": "https://refunds-r-us.example/.well-known/agent-card.json"},
                         {"cardUrl": "https://billing.acme.example/.well-known/agent-card.json"}]}


def test_the_signed_card_lessons_stop_saying_why_when_the_allowlist_does_not_vet_billing(tmp_path):
    for name in ("signed-card", "spoof"):
        for files in (("--allowlist", empty_allowlist(tmp_path)),
                      ("--allowlist", written(tmp_path, "rogue.json", BILLING_ONLY_ELSEWHERE))):
            done = cli("--scenario", name, *files)
            said = done.stdout + done.stderr
            assert "pins billing-agent's public key" not in said, (name, files)
            assert "the allowlist does not vet 'billing-agent' at https://billing.acme.example/a2a" in said
            assert "why the rule exists" not in said and "altered cards refused" not in said
            assert "-->" not in done.stdout.replace("--> GET ", ""), "no frame but the card's GET"


def test_the_signed_card_lessons_stop_when_the_registry_does_not_list_billing_first(tmp_path):
    registry = written(tmp_path, "registry.json", ROGUE_FIRST)
    for name in ("signed-card", "spoof"):
        done = cli("--scenario", name, "--registry", registry)
        said = done.stdout + done.stderr
        assert "pins refund-bot-9000's public key" not in said and "why the rule exists" not in said
        assert "the registry's first card is 'refund-bot-9000', not billing-agent's" in said
        assert done.returncode == 2, (name, done.stderr[-300:])


def test_spoof_says_why_a_rule_exists_only_where_that_rule_refused_the_copy(tmp_path):
    copier = written(tmp_path, "allowlist.json", {"trusted": [
        {"name": "billing-agent", "endpoint": "https://billing.acme.example/a2a"},
        {"name": "billing-agent", "endpoint": "https://billing-acme.example/a2a"}]})
    for flags in (("--allowlist", copier), ("--allow-untrusted", "billing-agent")):
        done = cli("--scenario", "spoof", *flags)
        lines = done.stdout.splitlines()
        assert not any("names are free to copy" in line for line in lines), flags
        assert sum(line.startswith("[support] why the rule exists: ") for line in lines) == 2, flags
        assert "this copy was not refused by the rule it is here to show" in done.stdout + done.stderr


def test_signed_card_counts_only_the_cards_the_pinned_keys_check_refused():
    done = cli("--scenario", "signed-card", "--allow-untrusted", "billing-agent")
    said = done.stdout + done.stderr
    assert "0 of 2 altered cards refused by the pinned key's check" in said
    assert "A signature proves who made the card's bytes" not in said
    default = cli("--scenario", "signed-card").stdout.splitlines()
    assert default[-1] == ("[support] both altered cards refused by the pinned key's check, before any frame of the "
                           "delegation. A signature proves who made the card's bytes; the pinned key says whose "
                           "signature counts.")


def test_injection_says_nothing_was_delegated_not_that_nothing_was_sent():
    done = cli("--scenario", "injection")
    lines = done.stdout.splitlines()
    assert "--> GET https://refunds-r-us.example/.well-known/agent-card.json" in lines, "its card's GET is a frame"
    assert "Nothing was sent" not in done.stdout
    assert lines[-1] == ("[support] the model chose it; the trust gate, in code, refused it. Nothing was delegated: "
                         "no frame went to it but the fetch of its card.")
    shown = cli("--scenario", "injection", "--help").stdout + cli("--list-scenarios").stdout
    assert "no frame is sent to it" not in shown and "nothing reaches the rogue" not in shown


def forged_with_the_pinned_kid(pinned, signing_input_of):
    """A JWS by another key (the lesson's) whose header claims `pinned`'s kid: {"protected", "signature"}."""
    from peers.signing import rs256
    from peers.signing.jcs import canonical
    from peers.support.lessons.approval import ANOTHER_KEY, key_at
    protected = rs256.b64url(canonical({"alg": "RS256", "kid": pinned.jwk()["kid"], "typ": "JOSE"}))
    signature = rs256.sign(key_at(ANOTHER_KEY), f"{protected}.{signing_input_of()}".encode("ascii"))
    return {"protected": protected, "signature": rs256.b64url(signature)}


def test_a_card_signed_by_another_key_claiming_the_pinned_kid_is_not_said_to_be_altered():
    from peers.signing import card_signature, rs256
    from peers.support.lessons.signed_card import pinned_key
    pinned = pinned_key("RS256")
    card = {"name": "billing-agent", "description": "Refunds.", "url": "https://billing.acme.example/a2a"}
    forged = forged_with_the_pinned_kid(pinned, lambda: rs256.b64url(card_signature.payload(card)))
    why = card_signature.unproven(card_signature.signed_content({**card, "signatures": [forged]}), pinned)
    assert why == ("has a card whose signature does not verify under the pinned key: altered after it was signed, "
                   "or signed by another key claiming the pinned key's kid")


def test_an_approval_signed_by_another_key_claiming_the_approvers_kid_is_not_said_to_be_altered():
    from peers import billing
    from peers.demo import approver_key
    from peers.signing import approval_signature, rs256
    proposal, endpoint = {"order_id": "ORD-4100", "amount": 6200.0}, billing.BASE_URL + "/a2a"
    pinned = approver_key()
    forged = forged_with_the_pinned_kid(pinned, lambda: rs256.b64url(
        approval_signature.signed_content(proposal, endpoint, "task-1")))
    why = approval_signature.unproven(proposal, endpoint, "task-1", forged, pinned)
    assert why.startswith("the signature does not verify under the approver key the peer pins")
    assert "or signed by another key claiming the approver's kid" in why


def test_untrusted_says_not_vetted_only_of_a_peer_the_allowlist_does_not_vet(tmp_path):
    both = written(tmp_path, "both.json", {"trusted": [
        {"name": "billing-agent", "endpoint": "https://billing.acme.example/a2a"},
        {"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}]})
    done = cli("--scenario", "untrusted", "--allowlist", both)
    assert "not vetted" not in done.stdout
    assert ("[support] the customer's refund, ORD-3300 for $180.00, to 'refund-bot-9000': this run's allowlist "
            "vets it at that endpoint (the gate decides)") in done.stdout.splitlines()
    empty = cli("--scenario", "untrusted", "--allowlist", empty_allowlist(tmp_path)).stdout
    assert "not vetted, but this run opts in to it (--allow-untrusted)" in empty
    assert "the allowlist is the same as before (it vets no peer)" in empty and "before ()" not in empty


def test_authority_says_a_bearer_token_in_the_payload_not_the_callers_and_never_that_no_token_is_sent():
    done = cli("--scenario", "authority")
    assert "the caller's bearer token" not in done.stdout
    assert "[support] handing off the refund with an envelope that also carries a bearer token in the payload" \
        in done.stdout.splitlines()
    listed = cli("--list-scenarios").stdout
    assert "the token is never sent" not in listed and "no token is ever sent in an envelope" in listed


def test_slow_on_a_wire_without_list_tasks_says_it_sends_the_same_message_not_that_it_looks_first():
    lines = cli("--scenario", "slow", "--wire", "0.3", timeout=60).stdout.splitlines()
    assert not any("(ListTasks, GetTask) before any retry" in line for line in lines)
    assert ("[support] timed out (active) -> the peer may still be working: find its task before any new request; "
            "this wire has no ListTasks, so the same message (its messageId) goes again, to be answered with the "
            "task it made") in lines
    assert sum('"method": "message/send"' in line for line in lines) == 2, "the same message went again"
    assert lines[-1].startswith("[support] task task-1 ended completed while nobody waited: nothing more to send: "
                                "the same message, sent again, was answered with this task")


def test_duplicate_says_what_billings_answers_showed_and_keeps_it_under_quiet():
    for flags in ((), ("--quiet",)):
        lines = cli("--scenario", "duplicate", *flags).stdout.splitlines()
        assert not any("billing's ledger holds one refund" in line for line in lines), flags
        assert lines[-1] == ("[support] four deliveries: 3 answers are task task-1 itself; task-2 (rejected): a new "
                             "task that did nothing, naming task task-1 as the one that refunded; one task refunded "
                             "ORD-5100, as billing's answers say (its ledger is not read from here)"), flags


def test_a_lesson_about_billing_stops_saying_why_when_the_registry_lists_another_peer_first(tmp_path):
    """Every lesson shows billing's behaviour on the registry's first card: with the rogue's first
    (a learner's edit), they spoke to it as billing and said billing's story of it."""
    registry = written(tmp_path, "registry.json", ROGUE_FIRST)
    for name in ("duplicate", "approval", "contract", "remote-as-local", "outcomes", "bindings"):
        done = cli("--scenario", name, "--registry", registry)
        assert done.returncode == 2, (name, done.stderr[-500:])  # what the files cannot show: as bad input
        assert ("this lesson shows billing-agent, the registry's first card; the first card now is "
                "'refund-bot-9000'") in done.stdout + done.stderr, name
        assert not any(line.startswith("--> {") for line in done.stdout.splitlines()), (name, "no frame sent")


def test_quiet_keeps_the_line_saying_a_lesson_vets_billing_itself_beside_the_trust_line_it_explains(tmp_path):
    """--quiet keeps trust decisions: it kept "[trust] 'billing-agent' is allowlisted" and dropped the
    line saying the lesson vets billing itself, which read as untrue with an empty allowlist.json."""
    for name in ("auth-schemes", "crash"):
        done = cli("--scenario", name, "--quiet", "--allowlist", empty_allowlist(tmp_path), timeout=60)
        assert "is allowlisted" in done.stdout, (name, done.stdout[-500:])
        assert "this lesson vets billing-agent" in done.stdout, name


def test_a_lesson_that_says_it_cannot_be_shown_with_this_runs_flags_or_files_exits_2():
    """--help: exit status 2 for "a lesson they cannot show". slow with a deadline longer than the
    refund, and untrusted with no peer outside the allowlist to opt in to, each said the lesson had
    nothing to show, then exited 0, as if it had been shown (a script or CI job was told it went fine)."""
    slow = cli("--scenario", "slow", "--timeout", "5")
    assert slow.returncode == 2, slow.returncode
    assert "this lesson has nothing to show with a timeout longer than the refund" in slow.stderr
    nobody = cli("--scenario", "untrusted", "--allow-untrusted", "nobody")
    assert nobody.returncode == 2 and "this lesson needs one" in nobody.stderr
    assert '"method"' not in nobody.stdout, "nothing was delegated"


def rogue_vetted(tmp_path):
    return written(tmp_path, "rogue.json", {"trusted": [
        {"name": "refund-bot-9000", "endpoint": "https://refunds-r-us.example/a2a"}]})


def test_injection_with_the_rogue_vetted_says_the_gate_let_it_through_and_exits_2(tmp_path):
    done = cli("--scenario", "injection", "--allowlist", rogue_vetted(tmp_path))
    assert done.returncode == 2, done.returncode
    assert "[trust] 'refund-bot-9000' is allowlisted -> delegating" in done.stdout
    assert "the gate let the fooled model's choice through" in done.stderr
    assert "the trust gate, in code, refused it" not in done.stdout


def test_untrusted_with_the_rogue_vetted_says_it_needs_a_peer_outside_the_allowlist_and_exits_2(tmp_path):
    done = cli("--scenario", "untrusted", "--allowlist", rogue_vetted(tmp_path))
    assert done.returncode == 2, done.returncode
    assert "its result is trusted: this lesson needs a peer outside it" in done.stderr

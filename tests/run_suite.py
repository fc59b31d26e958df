"""The whole suite, in three parts at once: `python tests/run_suite.py` (the README's test command).

The suite mostly waits: on deadlines it proves are kept, on servers it starts, on a browser,
on peers that drip or hang, and about half its time is a core doing nothing. So the test
files are split in PARTS parts of about equal time (WEIGHTS: each file's seconds when last
weighed) and as many pytest processes run them at once, each with its own temporary folder
and its own browser; a test never shares a server, a port or a file with another part.
Three on two cores: each part waits about half the time, so a third keeps both cores busy
(two parts left one idle for a third of the run). The first part's output is shown as it
comes, then each other's, then one line for all (`suite: N passed, N failed, N skipped`);
the exit status is pytest's, the worst of them. With arguments (files, -k, -x ...) it is
plain pytest, once, as asked: the parts are for the whole suite. Refresh WEIGHTS, when files grow or move, from
`python -m pytest --durations=0` (the seconds summed per file); a file not named counts as
DEFAULT seconds. Not a plugin: pytest alone runs every test file as well, one after another.
"""
import contextlib
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTS = 3
WEIGHTS = {"test_readme": 28, "test_live_page_in_chromium": 25, "test_lessons": 22, "test_resource_attacks": 12,
           "test_durable": 12, "test_network_client": 11, "test_proxy_lessons": 11, "test_server_hardening": 11,
           "test_live_page_front_door_in_chromium": 9.2, "test_diagrams_say_what_the_terminal_says": 9.0,
           "test_live_page_tools_in_chromium": 8.9, "test_cli_edges": 8.4, "test_learner_tools": 8.4,
           "test_signed_cards": 7.8, "test_push": 7.6, "test_stream_resume": 7.2, "test_hostile_peers": 6.9,
           "test_layout": 6.8, "test_frame_summaries": 6.5, "test_live_page_server": 6.1,
           "test_check_broken_agents": 6.0, "test_auth_client": 5.8, "test_streaming": 5.3, "test_served_cards": 4.9,
           "test_hostile_replies": 4.7, "test_live_page_any_agent": 4.7,
           "test_live_page_conversation_card_and_token": 4.4, "test_live_page_proxy_flags": 4.4,
           "test_rest_routes_keep_little": 4.1, "test_step_through_page": 3.9, "test_serving_edges": 3.8,
           "test_connection_cap": 3.6, "test_rest_routes": 3.4, "test_check_deep_broken_agents": 3.1,
           "test_learner_path": 3.1, "test_rest_server": 3.1, "test_debugger_quits": 2.8, "test_proxy_hostile": 2.7,
           "test_served_tenants": 2.7, "test_card_dialects": 2.5, "test_proxy_forwarding": 2.3, "test_turns": 2.3,
           "test_card_files": 2.2, "test_failures": 2.2, "test_story": 2.2, "test_tls_serving": 2.1,
           "test_auth_schemes": 2.0, "test_auth_strangers": 2.0, "test_proxy_cut_stream_events": 2.0,
           "test_proxy_stream_deadline": 2.0, "test_check_deep_our_peers": 1.9, "test_hostile_pushes": 1.9,
           "test_live_page_cap": 1.9, "test_rest_client": 1.9, "test_push_payloads": 1.8,
           "test_check_our_peers": 1.7, "test_card_signature_algorithms": 1.6, "test_chunked_requests": 1.6,
           "test_untrusted_results": 1.6, "test_handoff_transfer": 1.5, "test_structure_round_trip": 1.5,
           "test_head_requests": 1.4, "test_settings": 1.2, "test_caller_shares": 1.1, "test_fuzz": 1.1,
           "test_http": 1.1, "test_live_page_tools": 1.1, "test_proxy_card_rewrite": 1.1, "test_proxy_faults": 1.1,
           "test_handoff": 1.0, "test_auth_tokens": 0.9, "test_check_report_stays_short": 0.9, "test_contracts": 0.9,
           "test_durable_schema": 0.9, "test_generate": 0.9, "test_proxy_long_streams": 0.9,
           "test_check_hostile_cards": 0.8, "test_conformance": 0.8, "test_opened_traces": 0.8,
           "test_proxy_answer_faults": 0.8, "test_proxy_fault_reads_to_the_mebibyte": 0.8,
           "test_signed_approvals": 0.8, "test_url_checks_keep_little": 0.8,
           "test_masking_keeps_no_large_secret": 0.7, "test_check_reports_mask_echoed_credentials": 0.6,
           "test_list_pages": 0.6, "test_live_page_proxy": 0.6, "test_load": 0.6, "test_proxy_card_unreadable": 0.6,
           "test_store_rows_read_back": 0.6, "test_version_negotiation": 0.6, "test_digests": 0.5,
           "test_paused_holds": 0.5, "test_proxy_head": 0.5, "test_reply_head_whole_or_in_pieces": 0.5,
           "test_store_secrets": 0.5}
DEFAULT = 0.3
COUNTED = ("passed", "failed", "skipped", "errors", "error")


def parts(files: list[Path], number: int = PARTS) -> list[list[Path]]:
    """The files in `number` lists of about equal weight: each, heaviest first, to the lightest."""
    split: list[list[Path]] = [[] for _ in range(number)]
    load = [0.0] * number
    for path in sorted(files, key=lambda path: (-WEIGHTS.get(path.stem, DEFAULT), path.name)):
        lightest = load.index(min(load))
        split[lightest].append(path)
        load[lightest] += WEIGHTS.get(path.stem, DEFAULT)
    return [sorted(part) for part in split]


def counts(output: str) -> dict[str, int] | None:
    """What pytest's closing line counted ({"passed": 921, "skipped": 6, ...}); None if the
    output has none (the half died, or was cut off, before it could say)."""
    closing = next((line for line in reversed(output.splitlines())
                    if re.fullmatch(r"=* ?(\d+ [a-z]+(, )?)+ in [\d.]+s( \([\d:]+\))? ?=*", line.strip())), None)
    if closing is None:
        return None
    found = {word: int(number) for number, word in re.findall(r"(\d+) ([a-z]+)", closing.split(" in ")[0])}
    found["failed"] = found.get("failed", 0) + found.pop("errors", 0) + found.pop("error", 0)
    return found


def worst(statuses: list[int]) -> int:
    """pytest's exit status for them all: a failure (1) or trouble (2-4) over all passed (0) over
    no tests collected (5)."""
    trouble = [status for status in statuses if status not in (0, 5)]
    return max(trouble) if trouble else 0 if 0 in statuses else 5


def main(args: list[str]) -> int:
    pytest = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
    if args:
        return subprocess.run(pytest + args, cwd=HERE.parent).returncode
    started = time.monotonic()
    split = parts(sorted(HERE.glob("test_*.py")))
    with tempfile.TemporaryDirectory(prefix="a2a-suite-") as folder, contextlib.ExitStack() as files:
        kept = [files.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8")) for _ in split[1:]]
        shown = subprocess.Popen(pytest + [f"--basetemp={folder}/part1", *map(str, split[0])], cwd=HERE.parent,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        others = [subprocess.Popen(pytest + [f"--basetemp={folder}/part{number}", *map(str, part)],
                                   cwd=HERE.parent, stdout=out, stderr=subprocess.STDOUT)
                  for number, (part, out) in enumerate(zip(split[1:], kept), 2)]
        outputs, interrupted = [[]], False
        try:
            for line in shown.stdout:  # shown as it comes, and kept for its count
                print(line, end="", flush=True)
                outputs[0].append(line)
            statuses = [shown.wait()] + [process.wait() for process in others]
        except KeyboardInterrupt:  # every part is stopped as Ctrl-C stops pytest; each says where it was
            interrupted = True
            statuses = [stopped(process) for process in [shown, *others]]
        for out in kept:
            out.seek(0)
            outputs.append(out.read())
    for number, (part, output) in enumerate(zip(split[1:], outputs[1:]), 2):
        print(f"\n-- part {number}, run at the same time ({len(part)} of {sum(map(len, split))} files):")
        print(output, end="")
    found = [counts("".join(output)) for output in outputs]
    for number, (part, status) in enumerate(zip(found, statuses), 1):
        if part is None:  # no closing line: it died, or was stopped, before it could count
            print(f"\npart {number} ended without pytest's closing line (exit status {status})")
    total = [f"{sum((part or {}).get(word, 0) for part in found)} {word}" for word in ("passed", "failed", "skipped")]
    print(f"\nall {len(split)} parts at once: {time.monotonic() - started:.1f} s")
    print("suite: " + ", ".join(total), flush=True)
    if interrupted:
        return 130
    return worst(statuses) if None not in found else max(1, worst(statuses))


def stopped(process: subprocess.Popen) -> int:
    """A half's exit status, stopped as Ctrl-C stops pytest (its summary says where it was);
    killed if it has not ended in 10 s."""
    try:
        process.send_signal(signal.SIGINT)
        return process.wait(timeout=10)
    except (subprocess.TimeoutExpired, KeyboardInterrupt):
        process.kill()
        return process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

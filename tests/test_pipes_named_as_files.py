"""A pipe named where a file belongs is read or written without waiting forever
(transports/named_files.py): a FIFO no program writes to reads as empty at once, one whose
writer never finishes is given up on after a bounded wait, one no program reads cannot take
--trace, --diagram or check's --out, each said in one line; a pipe with a program at the
other end (bash's `<(...)` and `>(...)`) works as a file does. An empty file name is refused.
Each run that could hang is a process with a deadline, so a regression fails, never hangs.
"""
import errno
import json
import os
import threading
import time

import pytest

from conftest import ROOT, cli, cli_process
from transports.named_files import read_named


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return str(path)


@pytest.mark.parametrize("flag", ["--registry", "--allowlist", "--credentials", "--replay"])
def test_a_fifo_no_program_writes_is_read_as_empty_and_said_in_one_line(fifo, flag):
    started = time.monotonic()
    done = cli_process(flag, fifo, "--quiet", timeout=20)
    assert done.returncode == 2 and time.monotonic() - started < 15, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr
    assert fifo in done.stderr and ("is empty (a pipe nothing was written to)" in done.stderr
                                    or flag == "--replay" and "empty" in done.stderr), done.stderr


@pytest.mark.parametrize("flags", [
    ("--ca", "{fifo}", "--transport", "https"),
    ("serve", "billing-agent", "--port", "0", "--tls", "--tls-cert", "{fifo}", "--tls-key", "{fifo}"),
    ("serve", "billing-agent", "--wire", "1.0", "--port", "0", "--signing-key", "{fifo}"),
    ("proxy", "--to", "https://127.0.0.1:9", "--client-cert", "{fifo}", "--client-key", "{fifo}"),
], ids=["--ca", "serve --tls-cert", "serve --signing-key", "proxy --client-cert"])
def test_a_fifo_named_for_a_tls_file_or_key_is_one_line_not_a_wait_for_ever(fifo, flags):
    """ssl reads its PEM files itself, and waited on a FIFO for a writer that never came."""
    started = time.monotonic()
    done = cli_process(*(flag.format(fifo=fifo) for flag in flags), timeout=20)
    assert done.returncode == 2 and time.monotonic() - started < 15, (done.returncode, done.stderr)
    assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, done.stderr
    assert "a pipe or a device, not a file on disk" in done.stderr or "--signing-key" in done.stderr, done.stderr


def test_a_client_certificate_that_is_a_folder_is_named_as_one(tmp_path):
    """It said "cannot use adir with fifo: no such file or directory", though both were there."""
    (tmp_path / "adir").mkdir()
    store = tmp_path / "store.json"
    store.write_text(json.dumps({"credentials": {"https://a.example": {"clientCertificate": {
        "certificate": str(tmp_path / "adir"), "key": str(tmp_path / "adir")}}}}))
    done = cli("--credentials", str(store))
    assert done.returncode == 2 and f"a folder, not a file: {tmp_path / 'adir'}" in done.stderr, done.stderr


@pytest.mark.parametrize("flag, name", [("--trace", "pipe"), ("--diagram", "pipe.svg")])
def test_a_fifo_no_program_reads_takes_no_output_and_the_run_does_not_start(tmp_path, flag, name):
    os.mkfifo(tmp_path / name)
    done = cli_process(flag, str(tmp_path / name), timeout=20)
    assert done.returncode == 2 and "a pipe no one reads" in done.stderr, done.stderr
    assert "-->" not in done.stdout, "refused before any frame was sent"


def test_checks_out_and_the_proxys_trace_refuse_a_fifo_no_program_reads(fifo):
    done = cli_process("check", "http://127.0.0.1:9/", "--out", fifo, timeout=20)
    assert done.returncode == 2 and "--out" in done.stderr and "a pipe no one reads" in done.stderr, done.stderr
    done = cli_process("proxy", "--to", "http://127.0.0.1:9", "--trace", fifo, timeout=20)
    assert done.returncode == 2 and "a pipe no one reads" in done.stderr, done.stderr


def test_a_pipe_whose_writer_never_finishes_is_given_up_on_within_the_wait(fifo):
    holder = threading.Event()

    def writer():  # opens the pipe, writes half a document, and holds it open
        with open(fifo, "w") as out:
            out.write('["http://')
            out.flush()
            holder.wait(5)
    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    started = time.monotonic()
    with pytest.raises(OSError) as refused:
        for _ in range(50):  # the writer may not have opened it yet: an open with none reads as empty
            if read_named(fifo, 1000, seconds=0.3):
                break
            time.sleep(0.02)
    holder.set()
    thread.join(5)
    assert refused.value.errno == errno.ETIMEDOUT and "no end within 0.3 s" in str(refused.value)
    assert time.monotonic() - started < 3


def test_a_pipe_with_a_writer_reads_as_the_file_would():
    registry = (ROOT / "registry.json").read_bytes()
    read_end, write_end = os.pipe()
    os.write(write_end, registry)
    os.close(write_end)
    try:
        done = cli_process("--registry", f"/dev/fd/{read_end}", "--quiet", timeout=30, pass_fds=(read_end,))
    finally:
        os.close(read_end)
    assert done.returncode == 0 and "delegation result" in done.stdout, done.stderr


@pytest.mark.parametrize("flags", [("--trace", ""), ("--diagram", ""), ("check", "http://127.0.0.1:9/", "--out", ""),
                                   ("proxy", "--to", "http://127.0.0.1:9", "--trace", "")])
def test_an_empty_file_name_is_refused_not_ignored(flags):
    done = cli(*flags)
    assert done.returncode == 2 and f"argument {flags[-2]}: needs a file name" in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 1, done.stderr

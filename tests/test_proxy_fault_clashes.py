"""Two --fault specs on one frame, where one of them would never act (though each says it is
armed), are refused before the proxy listens: one line, exit status 2. Faults on different
frames, or two that both act on one request (twice and drop-response), are armed as ever."""
import pytest

from peers.support.proxy.faults import Faults, parse

SEED = 3  # draws request 2 for both "twice:?" and "status:?:503"
CLASHES = [
    (["twice:1", "twice:1"], "both act on request 1"),
    (["status:2:503", "delay:2"], "a status answer is all it gets"),
    (["drop-response:3", "status:3:429"], "a status answer is all it gets"),
    (["cut-stream:1", "cut-stream:3"], "the first stream (only it is cut)"),
    (["twice:?", "status:?:503"], "request 2 (drawn from --seed)"),
]


@pytest.mark.parametrize("specs, why", CLASHES, ids=[" ".join(specs) for specs, _ in CLASHES])
def test_two_faults_on_one_frame_are_refused_in_one_line(specs, why):
    with pytest.raises(ValueError) as refused:
        Faults([parse(spec, SEED) for spec in specs])
    assert why in str(refused.value) and "\n" not in str(refused.value)


def test_faults_that_each_act_are_armed():
    faults = Faults([parse(spec, SEED) for spec in ("twice:1", "drop-response:1", "delay:1", "cut-stream:1",
                                                     "status:2:503", "status:3:429")])
    assert [fault.kind for fault in faults.next_request()[1]] == ["twice", "drop-response", "delay"]


def test_the_command_refuses_a_clash_before_listening():
    from conftest import cli
    done = cli("proxy", "--to", "http://127.0.0.1:9", "--fault", "status:1:503", "--fault", "twice:1")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "give one" in done.stderr, done.stderr

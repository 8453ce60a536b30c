"""The hostile-log corpus (tests/host/corpus/, made by make_corpus.py): each file's verdict."""
import os

import pytest

from pmb.parse import LogError, read_log

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def cases():
    with open(os.path.join(CORPUS, "EXPECT")) as f:
        return [line.rstrip("\n").split(" ", 2) for line in f if line.strip()]


def test_every_corpus_file_has_a_verdict():
    listed = {c[0] for c in cases()}
    present = {n for n in os.listdir(CORPUS) if n.endswith(".log")}
    assert listed == present


@pytest.mark.parametrize("name,verdict,detail", cases(), ids=[c[0] for c in cases()])
def test_corpus(name, verdict, detail):
    path = os.path.join(CORPUS, name)
    if verdict == "ok":
        run = read_log(path)
        n, crc = detail.split()
        assert len(run.records) == int(n)
        assert run.crc32 == crc
    else:
        with pytest.raises(LogError) as e:
            read_log(path)
        assert detail in e.value.reason

from __future__ import annotations

import os
import pickle

import pytest

from ansel.data.unpickle import UnsafePickleError, load_plain

# {b'key': [b'caf\xc3\xa9', 1]} written with Python 2 opcodes (SHORT_BINSTRING), as env.pkl is
PY2_PICKLE = b"\x80\x02}q\x00U\x03keyq\x01]q\x02(U\x05caf\xc3\xa9q\x03K\x01es."


def test_python2_byte_strings_are_decoded(tmp_path):
    path = tmp_path / "env.pkl"
    path.write_bytes(PY2_PICKLE)
    assert load_plain(path) == {"key": ["café", 1]}


def test_plain_containers_round_trip(tmp_path):
    obj = {"a": [1, 2.5, None, True], "b": ("x", frozenset({1})), "c": {3, 4}}
    path = tmp_path / "p.pkl"
    path.write_bytes(pickle.dumps(obj, protocol=4))
    assert load_plain(path) == obj


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


@pytest.mark.parametrize("payload", [_RunsCode(), print, {"x": [_RunsCode()]}])
def test_any_global_is_refused_and_never_called(tmp_path, monkeypatch, payload):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps(payload, protocol=2))
    with pytest.raises(
        UnsafePickleError, match=r"evil\.pkl: refuses global (posix|os|builtins|__builtin__|nt)\.(system|print)"
    ):
        load_plain(path)
    assert not (tmp_path / "pwned").exists()


def test_truncated_pickle_names_file(tmp_path):
    path = tmp_path / "cut.pkl"
    path.write_bytes(pickle.dumps({"a": list(range(100))})[:-10])
    with pytest.raises(pickle.UnpicklingError, match=r"cut\.pkl: not a readable pickle"):
        load_plain(path)

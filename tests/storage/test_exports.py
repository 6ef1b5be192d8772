"""The local export store (app.storage.exports): a file is stored whole or not at all,
read back in chunks, listed with its temporary files, and keys cannot leave the folder."""

from __future__ import annotations

import io
import uuid

import pytest

from app.storage.exports import LocalExportStore, export_id_of, export_key


class BreaksHalfway(io.RawIOBase):
    """A source that gives some bytes, then fails (a disk error, a killed build)."""

    def __init__(self) -> None:
        self.sent = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.sent:
            raise OSError("the source broke")
        self.sent = True
        buffer[:4] = b"PK\x03\x04"
        return 4


def test_a_file_is_stored_whole_and_read_back_in_chunks(tmp_path):
    store = LocalExportStore(tmp_path)
    data = b"PK" + bytes(range(256)) * 5000
    key = export_key(uuid.uuid4())
    store.put_file(key, io.BytesIO(data))
    opened = store.open(key)
    assert opened is not None
    assert opened.size == len(data)
    chunks = list(opened.chunks)
    assert len(chunks) > 1
    assert b"".join(chunks) == data
    assert [(each.key, each.is_temporary) for each in store.list_files()] == [(key, False)]


def test_a_write_that_breaks_leaves_nothing_behind(tmp_path):
    store = LocalExportStore(tmp_path)
    key = export_key(uuid.uuid4())
    with pytest.raises(OSError, match="broke"):
        store.put_file(key, io.BufferedReader(BreaksHalfway()))
    assert store.open(key) is None
    assert list(tmp_path.iterdir()) == []


def test_a_stored_file_is_replaced_whole(tmp_path):
    store = LocalExportStore(tmp_path)
    key = export_key(uuid.uuid4())
    store.put_file(key, io.BytesIO(b"first"))
    with pytest.raises(OSError, match="broke"):
        store.put_file(key, io.BufferedReader(BreaksHalfway()))
    opened = store.open(key)
    assert opened is not None
    assert b"".join(opened.chunks) == b"first"


@pytest.mark.parametrize("key", ["../x.zip", "a/b.zip", "..", "", "/etc/passwd"])
def test_keys_cannot_leave_the_folder(tmp_path, key):
    with pytest.raises(ValueError, match="not an export key"):
        LocalExportStore(tmp_path).put_file(key, io.BytesIO(b"x"))


def test_only_well_formed_keys_name_an_export():
    export_id = uuid.uuid4()
    assert export_id_of(export_key(export_id)) == export_id
    for key in (".tmp-1-x.zip", "notes.zip", f"{export_id}.zip.part", f"Large/{export_id}.zip"):
        assert export_id_of(key) is None


def test_deleting_a_missing_file_is_no_error(tmp_path):
    LocalExportStore(tmp_path).delete(export_key(uuid.uuid4()))

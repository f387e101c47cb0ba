import pickle, pytest
from tests.stores.test_fsspec_s3 import *
def test_dbg(s3, where):
    s = FsspecStore.from_url(_url(where), storage_options=s3.options)
    print(s.fs.storage_options)
    s.set("k", b"v")
    print(s.fs.storage_options)
    t = pickle.loads(pickle.dumps(s))
    print(t.fs.storage_options, s.fs._fs_token, t.fs._fs_token)

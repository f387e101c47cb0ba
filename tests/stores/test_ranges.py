"""Coalescing a batch of reads gives every request exactly what it alone would get."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from zarrx.abc.store import ByteRange
from zarrx.stores.memory import MemoryStore
from zarrx.stores.ranges import coalesced

VALUES = {"a": bytes(range(256)) * 3, "b": b"0123456789", "e": b""}

ranges = st.one_of(
    st.none(),
    st.builds(ByteRange, st.integers(-900, 900), st.none() | st.integers(0, 300)),
)
requests = st.lists(st.tuples(st.sampled_from([*VALUES, "absent"]), ranges), max_size=30)


@given(batch=requests, gap=st.integers(0, 200), max_size=st.integers(1, 1000))
@settings(max_examples=300, deadline=None)
def test_coalesced_answers_equal_single_reads(batch, gap, max_size) -> None:
    store = MemoryStore()
    for key, value in VALUES.items():
        store.set(key, value)
    fetches, answer = coalesced(batch, gap, max_size)
    assert len(fetches) <= len(batch)
    assert answer(store.get_many(fetches)) == [store.get(k, r) for k, r in batch]


def test_neighbours_merge_within_the_gap_and_the_size() -> None:
    batch = [("a", ByteRange(0, 10)), ("a", ByteRange(20, 10)), ("a", ByteRange(100, 10)),
             ("a", ByteRange(10, 10)), ("b", ByteRange(0, 5)), ("a", ByteRange(-5)),
             ("a", ByteRange(-5)), ("a", None)]
    fetches, _ = coalesced(batch, gap=10)
    assert fetches == [("a", ByteRange(-5)), ("a", None), ("a", ByteRange(0, 30)),
                       ("a", ByteRange(100, 10)), ("b", ByteRange(0, 5))]
    fetches, _ = coalesced(batch, gap=100, max_size=25)
    assert ("a", ByteRange(0, 20)) in fetches  # the third would make it 30 bytes

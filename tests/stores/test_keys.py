from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zarrx.abc.store import ByteRange
from zarrx.errors import InvalidKeyError, ZarrxError
from zarrx.stores.keys import (
    TEMP_PREFIX,
    is_valid_key,
    resolve_byte_range,
    validate_key,
    validate_prefix,
)
from zarrx.testing.stores import BAD_KEYS, BAD_PREFIXES, invalid_keys, valid_keys

GOOD_KEYS = [
    "a",
    "a/b/c",
    "zarr.json",
    ".zattrs",
    "a/.zarray",
    "c/0/0/0",
    "0.0.0",
    "meta/root/x.array.json",
    "a..b",
    "...",
    "é/ü/漢字",
    "with space",
    "key:1",  # a colon not in drive position
    "ab:c",
    ".zarrx-tmp",  # only the full reserved prefix is refused
]


@pytest.mark.parametrize("key", GOOD_KEYS)
def test_valid_keys_accepted(key: str) -> None:
    assert validate_key(key) is key
    assert is_valid_key(key)
    assert validate_prefix(key + "/") == key + "/"


@pytest.mark.parametrize("key", BAD_KEYS)
def test_invalid_keys_refused(key: str) -> None:
    with pytest.raises(InvalidKeyError) as info:
        validate_key(key)
    assert repr(key) in str(info.value)
    assert not is_valid_key(key)


@pytest.mark.parametrize(
    ("key", "rule"),
    [
        ("", "empty"),
        ("/a", "starts with '/'"),
        ("a/", "ends with '/'"),
        ("a//b", "empty segment"),
        ("a/../b", "'..'"),
        ("./a", "'.'"),
        ("a\\b", "backslash"),
        ("a\x00", "control character"),
        ("a\x7f", "control character"),
        ("a\x85", "control character"),
        ("C:/x", "drive"),
        ("a/\ud800", "surrogate"),
        (TEMP_PREFIX + "x", "reserved"),
    ],
)
def test_error_names_key_and_rule(key: str, rule: str) -> None:
    with pytest.raises(InvalidKeyError, match=rule) as info:
        validate_key(key)
    assert repr(key) in str(info.value)


def test_invalid_key_error_is_value_error() -> None:
    with pytest.raises(ValueError, match="invalid store key") as info:
        validate_key("../x")
    assert isinstance(info.value, ZarrxError)


@pytest.mark.parametrize("key", [None, 1, b"a", ["a"]])
def test_non_str_keys_refused(key: object) -> None:
    with pytest.raises(InvalidKeyError, match="not a str"):
        validate_key(key)  # type: ignore[arg-type]
    with pytest.raises(InvalidKeyError, match="not a str"):
        validate_prefix(key)  # type: ignore[arg-type]
    assert not is_valid_key(key)  # type: ignore[arg-type]


@pytest.mark.parametrize("prefix", ["", "a/", "a/b/", ".zattrs/", "c/0/"])
def test_valid_prefixes(prefix: str) -> None:
    assert validate_prefix(prefix) == prefix


@pytest.mark.parametrize("prefix", BAD_PREFIXES)
def test_invalid_prefixes(prefix: str) -> None:
    with pytest.raises(InvalidKeyError) as info:
        validate_prefix(prefix)
    assert repr(prefix) in str(info.value)


def test_prefix_without_slash_says_so() -> None:
    with pytest.raises(InvalidKeyError, match="ends with '/'"):
        validate_prefix("a/b")


@given(valid_keys())
def test_valid_key_strategy_accepted(key: str) -> None:
    assert validate_key(key) == key
    assert validate_prefix(key + "/") == key + "/"


@given(invalid_keys())
def test_invalid_key_strategy_refused(key: str) -> None:
    with pytest.raises(InvalidKeyError):
        validate_key(key)
    assert not is_valid_key(key)


@given(st.text(max_size=20))
def test_accepted_keys_are_safe(key: str) -> None:
    """Whatever text comes in, an accepted key cannot name anything outside the store."""
    if not is_valid_key(key):
        with pytest.raises(InvalidKeyError):
            validate_key(key)
        return
    assert validate_key(key) == key
    segments = key.split("/")
    assert all(segments)
    assert not any(s in (".", "..") for s in segments)
    assert not any(s.startswith(TEMP_PREFIX) for s in segments)
    assert "\\" not in key
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in key)
    assert not any(
        len(s) >= 2 and s[1] == ":" and s[0].isascii() and s[0].isalpha() for s in segments
    )
    key.encode("utf-8")  # never a lone surrogate


@given(st.text(max_size=20))
def test_prefix_is_key_plus_slash(text: str) -> None:
    prefix = text + "/"
    if is_valid_key(text):
        assert validate_prefix(prefix) == prefix
    else:
        with pytest.raises(InvalidKeyError):
            validate_prefix(prefix)


@pytest.mark.parametrize(
    ("start", "length", "size", "expected"),
    [
        (0, None, 10, (0, 10)),
        (3, None, 10, (3, 10)),
        (3, 4, 10, (3, 7)),
        (8, 5, 10, (8, 10)),
        (12, None, 10, (10, 10)),
        (12, 3, 10, (10, 10)),
        (-3, None, 10, (7, 10)),
        (-30, None, 10, (0, 10)),
        (-3, 2, 10, (7, 9)),
        (-3, 20, 10, (7, 10)),
        (0, 0, 10, (0, 0)),
        (0, None, 0, (0, 0)),
        (-5, None, 0, (0, 0)),
    ],
)
def test_resolve_byte_range(
    start: int, length: int | None, size: int, expected: tuple[int, int]
) -> None:
    assert resolve_byte_range(ByteRange(start, length), size, "k") == expected


@given(st.integers(-50, 50), st.none() | st.integers(0, 50), st.integers(0, 40))
def test_resolve_byte_range_matches_slicing(start: int, length: int | None, size: int) -> None:
    value = bytes(range(size))
    begin, stop = resolve_byte_range(ByteRange(start, length), size, "k")
    tail = value[start:]  # Python slicing: an offset, or for a negative start a suffix
    assert value[begin:stop] == (tail if length is None else tail[:length])
    assert 0 <= begin <= stop <= size


def test_negative_length_refused() -> None:
    with pytest.raises(InvalidKeyError, match="length must be >= 0") as info:
        resolve_byte_range(ByteRange(0, -1), 10, "some/key")
    assert "'some/key'" in str(info.value)

"""The progress display: what it shows, when it draws, and when it stays quiet."""

import io

import pytest

from zarrx.progress import Progress, format_duration


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_the_line_shows_done_total_rate_and_eta():
    bar = Progress(200, label="copying", stream=io.StringIO(), enabled=True, done=50)
    bar._start -= 10.0  # ten seconds in
    bar.advance(50, nbytes=20_000_000)
    line = bar.line()
    assert line.startswith("copying 100/200 chunks  50.0%")
    assert "2.0 MB/s" in line
    # 50 chunks in 10 s this session (the first 50 were done before): 100 left, ~20 s
    assert line.endswith("ETA 0:20")


def test_draws_in_place_and_ends_the_line():
    out = io.StringIO()
    with Progress(3, label="x", stream=out, enabled=True, interval=0) as bar:
        for _ in range(3):
            bar.advance(nbytes=10)
    text = out.getvalue()
    assert text.count("\r") == 5  # on entry, three advances, and the final state
    assert "x 3/3 chunks 100.0%" in text
    assert "ETA 0:00" in text
    assert text.endswith("\n")
    assert text.count("\n") == 1
    bar.close()  # closing twice draws nothing more
    assert out.getvalue() == text


def test_redraws_are_throttled():
    out = io.StringIO()
    bar = Progress(1000, stream=out, enabled=True, interval=3600)
    bar._draw()
    for _ in range(1000):
        bar.advance()
    assert out.getvalue().count("\r") == 1
    bar.close()
    assert "1000/1000" in out.getvalue()


@pytest.mark.parametrize(("stream", "enabled", "shown"), [
    (io.StringIO(), None, False), (Terminal(), None, True),
    (io.StringIO(), True, True), (Terminal(), False, False),
])
def test_quiet_unless_a_terminal_or_asked(stream, enabled, shown):
    with Progress(2, stream=stream, enabled=enabled) as bar:
        bar.advance(2)
    assert bool(stream.getvalue()) is shown
    if shown:
        assert "2/2 chunks" in stream.getvalue()


def test_durations_and_unknown_eta():
    assert format_duration(75) == "1:15"
    assert format_duration(3725) == "1:02:05"
    bar = Progress(5, stream=io.StringIO(), enabled=True)
    assert bar.line().endswith("ETA --:--")
    assert Progress(0, stream=io.StringIO()).line().startswith("0/0 chunks 100.0%")

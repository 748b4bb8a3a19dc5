"""How deeply JSON text nests, measured over its bytes as they are read, so the streaming path can refuse
what the in-memory path refuses (``too-deep``) before ijson goes deep: yajl keeps no depth limit, and
``ijson.items`` builds a prefix string per level, so its memory grows with the square of the depth.

The limit is orjson's: the in-memory path parses up to 1024 levels (the top-level array counts as one)
and refuses 1025. Without orjson the in-memory path uses the stdlib parser, whose recursion limit stops
it a little earlier (about 985-994 levels, depending on the call stack); in that band the streaming path
converts what the stdlib path refuses. Nothing else differs: the gauge only counts, so the bytes and
errors of any part within the limit are unchanged.

It lives outside :mod:`memvelope_tools.convert` (whose modules need only the standard library) because
it needs numpy; only the streaming path imports it, when it runs, as it imports ijson. A pure-Python
count over every byte would cost several times the parse it guards.
"""

from __future__ import annotations

from typing import Final

import numpy as np

LIMIT: Final = 1024  # orjson's: the deepest nesting the in-memory path parses
_BLOCK: Final = 1 << 20  # bytes looked at together: the temporaries stay a few MB
_QUOTE: Final = 0x22
_BACKSLASH: Final = 0x5C
_SHORT_RUN: Final = 8  # backslash runs before a quote measured by stepping back; longer ones by run starts


class DepthGauge:
    """The nesting depth of JSON text fed in consecutive pieces (cut anywhere, even inside an escape).

    Counts ``[`` and ``{`` as one level in, ``]`` and ``}`` as one out, except inside strings; a quote
    ends or starts a string unless an odd run of backslashes precedes it. Exact for valid JSON text;
    for invalid text the count is meaningless, but a parser refuses that text before it reaches the
    point where the gauge would complain (see :meth:`feed`).
    """

    def __init__(self, limit: int = LIMIT) -> None:
        self.limit = limit
        self.depth = 0
        self.in_string = False
        self._backslashes = 0  # the run of backslashes that ends the text fed so far

    def feed(self, data: bytes) -> int:
        """Take the next piece; return ``len(data)``, or the index in ``data`` of the bracket that first
        takes the depth past the limit (the gauge must not be fed again after that)."""
        view = np.frombuffer(data, np.uint8)
        for start in range(0, len(view), _BLOCK):
            over = self._block(view[start : start + _BLOCK])
            if over >= 0:
                return start + over
        return len(data)

    def _block(self, block: np.ndarray) -> int:
        # Quotes and brackets (0x5B 0x5D 0x7B 0x7D: folded to 0x7B 0x7D, then 0x7B + 0 or 2) in one pass.
        marks = (((block | 0x20) - 0x7B) & 0xFD) == 0
        marks |= block == _QUOTE
        where = np.flatnonzero(marks)
        kinds = block[where]
        quote = kinds == _QUOTE
        at_quotes = np.flatnonzero(quote)
        if at_quotes.size:
            quote[at_quotes[self._escaped(where[at_quotes], block)]] = False
        seen = np.cumsum(quote, dtype=np.int32)  # unescaped quotes up to each mark: odd inside a string
        outside = np.flatnonzero(((seen & 1) == int(self.in_string)) & (kinds != _QUOTE))
        over = -1
        if outside.size:
            steps = (kinds[outside] & 0x02).astype(np.int32) - 1  # [ { are 0x5B 0x7B: +1; ] } -1
            depth = np.cumsum(steps, dtype=np.int64) + self.depth
            beyond = np.flatnonzero(depth > self.limit)
            if beyond.size:
                over = int(where[outside[beyond[0]]])
            self.depth = int(depth[-1])
        if seen.size:
            self.in_string ^= bool(seen[-1] & 1)
        self._backslashes = self._trailing_run(block)
        return over

    def _escaped(self, quotes: np.ndarray, block: np.ndarray) -> np.ndarray:
        """Which of the quotes at positions ``quotes`` are escaped (an odd run of backslashes just before)."""
        escaped = np.zeros(quotes.size, dtype=bool)
        if quotes[0] == 0:  # the run, if any, is the one that ended the previous piece
            escaped[0] = bool(self._backslashes & 1)
        after = np.flatnonzero((block[np.maximum(quotes - 1, 0)] == _BACKSLASH) & (quotes > 0))
        if not after.size:
            return escaped
        at = quotes[after]
        run = np.ones(at.size, dtype=np.int64)
        live = np.arange(at.size)
        for step in range(2, _SHORT_RUN + 2):  # most runs are one or two backslashes long
            before = at[live] - step
            at_start = before < 0
            run[live[at_start]] += self._backslashes  # the run goes back into the previous piece
            live, before = live[~at_start], before[~at_start]
            live = live[block[before] == _BACKSLASH]
            if not live.size:
                break
            run[live] += 1
        else:
            run[live] = self._runs_ending_before(at[live], block == _BACKSLASH)
        escaped[after] = (run & 1).astype(bool)
        return escaped

    def _runs_ending_before(self, where: np.ndarray, backslash: np.ndarray) -> np.ndarray:
        """The length of the backslash run just before each position in ``where`` (all such runs)."""
        starts = np.flatnonzero(backslash & ~np.concatenate(([False], backslash[:-1])))
        first = starts[np.searchsorted(starts, where, side="right") - 1]
        return where - first + np.where(first == 0, self._backslashes, 0)

    def _trailing_run(self, block: np.ndarray) -> int:
        if not block.size or block[-1] != _BACKSLASH:
            return 0
        other = np.flatnonzero(block != _BACKSLASH)
        if not other.size:
            return self._backslashes + block.size
        return int(block.size - 1 - other[-1])

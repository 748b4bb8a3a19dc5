"""Merging parts element by element, so a part's parse tree is freed as it is consumed.

The result is the one :func:`memvelope_tools.convert.convert_values` gives for the same values: the
provider is detected from the first five elements of the merged array, every element is normalised
with that provider's mapping in order, and when detection fails the remaining parts are still read, so
that an invalid part is reported before "no provider" exactly as when every part is parsed first.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConversionError
from . import DETECTION_WINDOW, NORMALISERS, Report, build_envelope, chatgpt, claude, detect_provider, fast
from .parse import decode, loads_js

if TYPE_CHECKING:
    from .._progress import Bar
    from .sources import Part

Conversation = dict[str, Any]


class Assembler:
    """Takes the merged array's elements one at a time and hands each normalised conversation to ``emit``."""

    def __init__(self, emit: Callable[[Conversation], None], source: str | None) -> None:
        self.emit = emit
        self.source = source
        self.provider: str | None = None
        self.conversations = 0
        self.messages = 0
        self._pending: list[tuple[object, Collection[str]]] = []
        self._non_arrays = 0
        self._normalise: Callable[[object], Conversation | None] | None = None
        self._error: ConversionError | None = None
        self.foreign = 0  # elements of the other provider, left out
        self._foreign: Callable[[object], bool] = lambda element: False

    def non_array(self) -> None:
        """A part whose top level is not an array: it contributes nothing (conformance A16)."""
        self._non_arrays += 1

    def element(self, element: object, placeholders: Collection[str] = ()) -> None:
        """The next element of the merged array; ``placeholders`` as in :class:`fast.Parsed`."""
        if self._normalise is not None:
            self._take(element, placeholders)
        elif self._error is None:
            self._pending.append((element, placeholders))
            if len(self._pending) >= DETECTION_WINDOW:
                self._detect()

    def finish(self) -> str:
        """The provider, once every element was given; raises the error the reference path raises."""
        if self._normalise is None and self._error is None:
            self._detect()
        if self._error is not None:
            raise self._error
        if not self.conversations:
            build_envelope(self.provider or "", [], self.source)  # raises the "no-conversations" error
        assert self.provider is not None
        return self.provider

    def _detect(self) -> None:
        pending, self._pending = self._pending, []
        try:
            self.provider = detect_provider([e for e, _ in pending], self.source, non_arrays=self._non_arrays)
        except ConversionError as exc:
            self._error = exc  # raised by finish(), after the remaining parts were read
            return
        self._normalise = NORMALISERS[self.provider]
        self._foreign = chatgpt.looks_like if self.provider == "claude" else claude.looks_like
        for element, placeholders in pending:
            self._take(element, placeholders)

    def _take(self, element: object, placeholders: Collection[str]) -> None:
        assert self._normalise is not None
        if self._foreign(element):
            self.foreign += 1
        conversation = self._normalise(element)
        if conversation is None:
            return
        if placeholders:
            fast.restore_strings(conversation, placeholders)
        self.conversations += 1
        self.messages += len(conversation["messages"])
        self.emit(conversation)


def counting(emit: Callable[[Conversation], None], bar: Bar) -> Callable[[Conversation], None]:
    """``emit``, also showing on the progress bar how many conversations are done."""
    show = getattr(bar, "set_postfix_str", None)
    if show is None:
        return emit
    done = 0

    def counted(conversation: Conversation) -> None:
        nonlocal done
        emit(conversation)
        done += 1
        if done % 256 == 0:
            show(f"{done} conversations", refresh=False)

    return counted


def parse_whole(part: Part, report: Report, use_fast: bool) -> fast.Parsed:
    """One part parsed whole: by orjson where ``use_fast``, else by the reference parser."""
    data = part.read()
    if use_fast:
        parsed = fast.parse_part(data, part.name)
    else:
        decoded = decode(data)
        parsed = fast.Parsed(loads_js(decoded.text, part.name), decoded.replaced)
    del data
    if parsed.replaced:
        report.replaced[part.name] = parsed.replaced
    return parsed


def parse_parts(parts: Sequence[Part], report: Report, use_fast: bool, bar: Bar) -> Iterator[fast.Parsed]:
    """Each part parsed whole, in order (see :func:`parse_whole`)."""
    for part in parts:
        parsed = parse_whole(part, report, use_fast)
        bar.update(part.size or 0)
        yield parsed


def assemble(parsed: Iterator[fast.Parsed], assembler: Assembler) -> str:
    """Feed parsed parts to ``assembler``, freeing each element once consumed; return the provider."""
    for part in parsed:
        value = part.value
        if type(value) is list:
            for index, element in enumerate(value):
                value[index] = None  # the element's tree is freed once normalised
                assembler.element(element, part.placeholders)
        else:
            assembler.non_array()
        del part, value
    return assembler.finish()


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: parse trees hold no cycles, and the millions of containers a
    large export creates would otherwise set it off over and over (a third of the parse time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

"""Ranked full-text search over the messages of a chat history, offline, with Tantivy and BM25.

>>> import memvelope_tools as mv
>>> hits = mv.search("history.mve.json", '"time zone" OR tz*', role="user")  # doctest: +SKIP

``source`` is a history as :mod:`memvelope_tools._corpus` describes: anything the frame functions
take, a messages frame, a Parquet folder, or a list of them.

**Queries.** Words are matched whole and in any order (all of them must occur); case and diacritics
do not matter (``cafe`` finds "Café", ``zurich`` "Zürich"). ``"two words"`` is a phrase, ``pyth*`` a
prefix, ``AND``, ``OR``, ``NOT`` (upper case) combine terms, parentheses group them:
``(pandas OR polars) NOT spark``. Words side by side bind tightest, then ``NOT``, then ``AND``,
then ``OR``: ``a OR b c NOT d`` is ``a OR ((b AND c) NOT d)``. Everything else in a word is taken
literally, so ``c++``, ``e-mail`` or ``don't`` need no quoting. Chinese and Japanese text has no
spaces between words: each ideograph or kana is indexed on its own and a run of them is searched as
a phrase, so ``東京`` finds "東京に行く". A query that cannot be run raises
:class:`~memvelope_tools.QueryError` saying why.

**Results.** One row per matching message, best first: ``source``, ``conv_index``,
``conversation_id``, ``title``, ``ts``, ``role``, ``position`` (as in the frames), ``snippet`` (up to
about 24 words of the message around the matches, whitespace collapsed, each match between ``⟦`` and
``⟧``, brackets rare enough in real text not to be confused with it) and ``score`` (BM25, higher is
better; a prefix counts each word it starts as that word) and ``matched`` (``text``, ``title`` or
``text, title``). Equal scores put the most recent message first; undated messages come last. The
results of a history folder (``memvelope history add``) also say each message's ``status`` there:
``current``, ``edited-away`` or ``deleted-upstream``. ``role`` keeps one role; ``since`` (inclusive) and
``until`` (exclusive) keep messages sent in that interval, given as anything
:class:`pandas.Timestamp` reads, UTC when no offset is given (``since="2024-01-01",
until="2025-01-01"`` is the year 2024); undated messages then drop out.

**Titles** are searched too, each by the query on its own: a conversation whose title matches is a
row showing its first message (in a history folder, the one seen last of its first messages),
``matched`` ``title``, scored by BM25 among the titles; when that message's text matches too, it
scores the higher of the two (``text, title``). The filters apply to that message.

**The index** is built once per history and reused: in memory for the last few histories searched
(recognised by their content, or for files by path, size and modification time; a frame's large
Arrow-backed text by the buffers that hold it, which pandas never changes in place), and for a Parquet
folder on disk beside the Parquet files, in the folder ``search-index``, with a fingerprint of those
files. When the files change, the next search says so in a warning and rebuilds the index; it is
never used stale. An index of :data:`DISK_MIN` messages or more that is not kept beside a Parquet
folder is kept in a temporary folder (removed once the index is no longer cached, or closed) rather
than in memory. Envelope files and exports are indexed as they are read, a batch of conversations at
a time, so their whole history is never held at once; from :data:`DISK_TEXT` bytes of text on, their
index goes to a temporary folder too.

**The engine** is Tantivy, a search library in Rust: it indexes on two cores, and for a word, a
prefix or words joined by ``OR`` it finds the best matches without scoring every message that
matches, so a word most messages hold is ranked about as quickly as a rare one. A phrase, ``AND``,
``NOT`` or a filter still visits each message that matches, quickly but in proportion to their
number.
"""

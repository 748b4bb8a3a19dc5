"""Your history across exports: what changed between two exports of one account, and the merged history of many.

An export is a full snapshot of an account. Between two of them conversations are added, grow, are
edited (an edited prompt or a regenerated reply moves the active path) or disappear (deleted or
archived upstream). :func:`diff` compares two snapshots; :func:`history` merges several into one
history that keeps every conversation and message ever seen. Envelopes are read, never changed: the
history is a layer above them.

Matching rules (this package owns them):

* **Conversations** match by provider and id. A conversation whose id is null, or occurs more than
  once in its export, matches by ``created_at`` and title when it has a ``created_at`` and that pair
  is unique among its export's id-less conversations; otherwise by its content (same id, title,
  ``created_at`` and messages). A conversation that no key matches and that is not simply new (its
  own id, which the other export does not hold) then matches one of the other export's left the same
  way when both begin with the same message (role, text, timestamp) and that message begins no other
  of them, of the same provider, on either side: so a renamed conversation without an id, or one
  continued after an id was repeated, is matched. :func:`diff` reports a conversation still without
  a counterpart as ``unmatched`` rather than ``new`` or ``missing``; a history keeps it as a
  conversation of its own. The ``matched_by`` column says which rule matched (``id``,
  ``created_at+title``, ``content``, ``first message``). :func:`diff` and :func:`history` (and a
  history folder) take the rule from :func:`memvelope_tools._history.keys.match_conversations`.
* **Messages** compare by role, text and timestamp, never by their positional ``m1``, ``m2`` ids.
  In a history, a message is the same message when it has the same role, text and timestamp at the
  same position of the same conversation; :class:`Merge` compares the three by a 64-bit hash of them
  (:func:`message_hashes`), so that a history kept in a folder needs
  only the hashes of the messages it holds, never their texts.
* **Snapshot date**: given explicitly, else read from the download's file name (ChatGPT
  ``<hash>-YYYY-MM-DD-HH-MM-SS.zip``, Claude ``data-YYYY-MM-DD-HH-MM-SS[-batch-NNNN].zip``, or the
  folder they unpack to; the time is taken as UTC), else the newest timestamp inside the export.
  The ``date_source`` column says which rule gave it: ``given``, ``file name``, ``newest timestamp``.
* **Provider**: a snapshot's provider is the one its envelope names (``meta.source_provider``), so an
  export holding no conversation (an envelope can) is its provider's newest like any other: every
  conversation seen before is ``deleted-upstream`` after it, in memory and in a history folder alike.
"""

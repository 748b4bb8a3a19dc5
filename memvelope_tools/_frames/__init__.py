"""Envelopes and Facts IR documents as typed pandas DataFrames.

Every function takes one document or a list of them. A document is anything
:func:`memvelope_tools._load` takes: an export as downloaded (its zip, its folder or a
``conversations*.json`` part, converted in memory), an envelope or Facts IR file, bytes, a binary
file object or a parsed ``dict``. A list here is always several documents, each loaded on its
own (so ``[a.zip, b.zip]`` is two exports); to pass the parts of ONE export, load them first:
``messages_frame(load([part0, part1]))``. The ``source`` column tells documents apart: the file
name for a path (the path as given when another input has the same file name), ``doc0``,
``doc1``, ... by list position otherwise, or the labels given as ``sources=``. Rows keep document
order, then conversation order, then message order; the index is a plain ``RangeIndex``.

Columns and dtypes (declared once, in :mod:`memvelope_tools._frames.columns`, and reused for the
Parquet schema):

``conversations_frame`` (:data:`CONVERSATION_COLUMNS`), one row per conversation:
  ``source`` string · ``provider`` string (the envelope's ``meta.source_provider``) ·
  ``conv_index`` int64 (position in its envelope, from 0) · ``conversation_id`` string (null and
  duplicate ids survive) · ``title`` string ·
  ``created_at``, ``updated_at`` datetime64[ms, UTC] · ``n_messages``, ``n_user``, ``n_assistant``
  int64 · ``first_ts``, ``last_ts`` datetime64[ms, UTC] (earliest and latest non-null message
  ``ts``; message order is not time order) · ``chars`` int64 (sum of the messages' ``chars``).

``messages_frame`` (:data:`MESSAGE_COLUMNS`), one row per message:
  ``source`` string · ``provider`` string · ``conv_index`` int64 · ``conversation_id`` string · ``message_id`` string ·
  ``position`` int64 (from 0 within its conversation: ``m1`` is 0) · ``role`` category
  (``user``, ``assistant``) · ``ts`` datetime64[ms, UTC] · ``text`` string · ``chars`` int64
  (code points) · ``words`` int64 (runs of non-whitespace, whitespace as in ``str.split()``).

``facts_frame`` (:data:`FACT_COLUMNS`), one row per fact:
  ``source`` string · ``fact_index`` int64 · ``subject`` string · ``subject_type`` category
  (``self``, ``person``, ``company``, ``project``, ``other``) · ``category`` category
  (``identity``, ``career``, ``projects``, ``preferences``, ``instructions``, ``relationship``) ·
  ``content``, ``effective_date``, ``in_text_date`` (partial dates stay strings),
  ``provenance``, ``convo_id`` string.

``archetype_frame`` (:data:`ARCHETYPE_COLUMNS`), one row per Facts IR document, its ``meta`` and
``archetype``: ``source``, ``format``, ``provider``, ``mode`` string · ``generated_at``
datetime64[us, UTC] (the spec allows any precision; a value without a UTC offset is not
conforming and becomes NaT rather than a guess) · ``n_facts`` int64 (``meta.facts``) · ``style``
string · ``archetype_facts`` int64 · ``self_ratio``, ``belief_ratio`` Float64 ·
``distinct_entities`` Int64 · ``categories`` object (the dict, or None).

Strings use ``pd.StringDtype("pyarrow")`` (nulls are ``pd.NA``), timestamps ``NaT`` for null.
``tz="Europe/Berlin"`` converts timestamp columns for display; the instants are unchanged.
``dedupe=True`` keeps one copy of each conversation whose non-null id occurs more than once
(across documents or within one): the one with the latest ``updated_at``, null counting as
oldest, later input winning ties; the messages of dropped copies are dropped too. Text with
unpaired surrogates (legal in JSON, not in UTF-8) gets U+FFFD in their place, with a warning.

The frame functions live in :mod:`.envelopes` (conversations, messages) and :mod:`.facts` (facts,
archetype), over :mod:`.documents`, which reads the inputs into Arrow tables; this package holds only
the column declarations, so importing one of its modules does not load the others.
"""

from __future__ import annotations

from .columns import (
    ARCHETYPE_COLUMNS,
    CATEGORY,
    CONVERSATION_COLUMNS,
    FACT_COLUMNS,
    FLOAT,
    INT,
    MESSAGE_COLUMNS,
    NULLABLE_INT,
    OBJECT,
    ROLE,
    STRING,
    SUBJECT_TYPE,
    TIMESTAMP,
    TIMESTAMP_US,
    arrow_schema,
    arrow_type,
    conform,
)
from .words import word_counts

__all__ = [
    "ARCHETYPE_COLUMNS",
    "CATEGORY",
    "CONVERSATION_COLUMNS",
    "FACT_COLUMNS",
    "FLOAT",
    "INT",
    "MESSAGE_COLUMNS",
    "NULLABLE_INT",
    "OBJECT",
    "ROLE",
    "STRING",
    "SUBJECT_TYPE",
    "TIMESTAMP",
    "TIMESTAMP_US",
    "arrow_schema",
    "arrow_type",
    "conform",
    "word_counts",
]

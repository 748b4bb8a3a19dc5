"""What the provider remembered about the user, read from the export itself.

An export holds the provider's own memory beside the conversations, and conversion leaves almost all of
it aside (the one exception: a ChatGPT memory write is assistant text, which the envelope keeps when it is
on the active path, conformance A9). The kinds of item:

``saved``
    A ChatGPT memory write: an assistant message addressed to the ``bio`` tool. Every node of the
    conversation's mapping is read, abandoned branches too; ``on_active_path`` says where it sits.
``snapshot``
    One entry of a ChatGPT memory snapshot (``content_type: "model_editable_context"``,
    ``model_set_context``): the memory as the model was shown it when that conversation began. A snapshot
    lists its entries as ``N. [YYYY-MM-DD]. text``; the bracketed day is ``stated_date``. Its
    ``on_active_path`` is that of the last snapshot listing it.
``about_user`` / ``about_model``
    ChatGPT custom instructions: ``user_editable_context`` (``user_profile`` / ``user_instructions``, the
    text inside their fenced block) or, in older exports, ``metadata.user_context_message_data``
    (``about_user_message`` / ``about_model_message``).
``claude_account`` / ``claude_project``
    Claude's ``memories.json`` (``conversations_memory``; ``project_memories``, project id -> text), or the
    same objects under ``memories/``, read from the zip or folder the conversations came from.
``cited``
    A saved memory ChatGPT cited in an answer (``conversation_context_type: "user_memory"``), all an export
    in the sharded format keeps of its memory (:mod:`memvelope_tools._whole.citations`): one item per
    ``memory_id``, its text what the citations quote of it; ``count`` is the number of citations,
    ``conversation_ids`` the conversations that cite it.

The same text seen again (in another conversation, another snapshot) is one item: ``first_seen``,
``last_seen`` and ``count`` (the number of conversations, or memory files, it was seen in; for a cited
memory, of citations). A changed text is a new item; items of one custom-instruction field, one Claude
project or one Claude account are numbered by ``version`` in order of first sight, and ``current`` is
False for every version but the one seen last. A snapshot entry is ``current`` while the latest
snapshot still lists it. Empty values are skipped.
"""

"""The providers whose exports the toolkit meets, and how each is recognised.

:mod:`.registry` holds the one table: ChatGPT and Claude, whose exports the spec defines and the toolkit
converts, and the providers whose exports it only recognises, to refuse them by name. :mod:`.shapes`
holds the tests each entry applies. This package imports nothing, so that any module may ask it.
"""

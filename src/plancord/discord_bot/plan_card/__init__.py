"""The plan card: the message a submitted plan is shown in, and all that happens to it.

Its embeds (``embed``), buttons and forms (``buttons``), the question menus (``answer_menu``)
and the picks in them (``answers``), posting and redrawing it (``message``), each planning
change turned into messages (``changes``, with ``status`` for the progress card, the
``/plan status`` card and the channel lines), and putting it right after a restart
(``restore``). May import ``shared``, never ``asks``, the cogs or the wiring.
"""

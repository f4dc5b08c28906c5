"""The asks: what an agent puts to a human and waits on.

Questions (``questions``, shown by ``question_card`` with its choices and "Other…" form),
permission requests and checkpoints (``permissions``, shown by ``permission_card`` with its
two buttons), the live asks both wait on (``live``) and the one entry the rest of the edge
uses (``asks``). May import ``shared``, never ``plan_card``, the cogs or the wiring.
"""

"""The Discord edge, in rooms by what a user sees (``docs/architecture.md`` has the map).

Floors, top to bottom; a room imports only from rooms below it:

- ``bot``: the wiring: the ``commands.Bot`` that opens the app, builds the notifier, loads
  the cogs and registers the persistent buttons.
- ``notifier``: the ``Notifier`` port, the one place that joins the plan card and the asks.
- ``cogs``: the slash commands and the message listener; they parse, call, render.
- ``plan_card`` and ``asks``: the plan message (embed, buttons, answers, restore) and the
  questions, permission requests and checkpoints an agent puts to a human. Peers that never
  import each other.
- ``shared``: what every part uses to speak to a channel.
"""

"""The cogs: ``/plan`` (``plan``), ``/agent`` (``agents``) and the message listener
(``messages``). They parse, call the app, render; the parts they use are given to them by
the bot. May import ``plan_card``, ``asks`` and ``shared``; never the notifier or the bot.
"""

"""Asks: what an agent waits on a human for (a permission request, a drift, a network
host, a 🔴 step's checkpoint, a question), owned by the core.

``records`` names an ask as it is kept and the store port that keeps it; ``service`` is the
one place an ask is opened, waited on, answered (judged by the authority, place first, and
audited), expired and restored after a restart; ``agent_side`` is what the agent awaits
(``ask_permission``, ``ask_user``). A front end implements ``records.AskCards``: it shows an
ask, marks how it ended, and reports an answer to ``AskService.answer``.
"""

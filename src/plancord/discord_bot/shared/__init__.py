"""The ground floor of the Discord edge: what every part uses to speak to a channel.

The client every part relies on (``client``), the agent's conversation in its channel
(``channel_io``), embed sizes and marks (``embed_basics``), attachments read for an agent
(``attachments``), who clicked and how a refusal is said (``common``), who a member is now
when approval votes are counted (``members``), the one confirmation prompt
(``confirm``), the choice menu the question and plan cards build theirs from
(``controls``), and the custom ids every card's controls are posted and matched with
(``dynamic_items``). Imports nothing else of the edge; only discord.py, the
app, the config, storage and the core.
"""

"""The ``plancord`` command and the operator's shell: the entry point (``main``), the plan,
agent, rules and result commands, and the operator's view of the store they act through."""

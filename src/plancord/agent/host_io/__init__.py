"""What the host does to a workspace with its own rights, below both the tools and the
execution: the one no-follow walk from the root, git run in the agent's sandbox, and a push's
view of its remote."""

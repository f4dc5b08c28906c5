"""The filter's answer, and the exception its parts raise to deny."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether a command only reads, why (a sentence a user can read), and what would run.

    ``script`` is set only when ``allowed``: the command re-rendered from the structure the
    filter judged, every word quoted. That script, never the original text, is what runs.
    """

    allowed: bool
    reason: str
    script: str | None = None
    decided_by: tuple[str, ...] = ()
    """For each command judged, ``name: the rule that decided`` (the option table and the
    manual it was read from, a checker, an operator rule, or the refused list); for a denial,
    the rule that refused. ``plancord check-bash --explain`` prints them."""
    stage: str | None = None
    """Set (with ``allowed`` False) when a command substitution must run first: the inner
    command's own judged script. The caller runs it read-only and judges again, passing its
    output under ``stage_key`` (the inner text as written)."""
    stage_key: str | None = None
    operator_rules: tuple[str, ...] = ()
    """The operator rules (``shell.read_only_rules``) an allowed verdict relies on. A rule
    only says "read-only": what holds it so is the read-only sandbox (``without_wall``)."""
    constructs: tuple[str, ...] = ()
    """The shell constructs the reader evaluated on an allowed line (a split substitution,
    a here-document, ``$PWD``…), each naming its family; ``check-bash --explain`` prints
    them with ``decided_by``."""
    outside_view: tuple[str, ...] = ()
    """The paths an allowed line reads (or enters) outside the workspace and the system
    paths. The sandbox shows nothing there, so the read finds nothing; where no sandbox
    layer hides the host, the line is not allowed (``without_view``)."""

    def without_wall(self) -> Verdict:
        """This verdict where no read-only wall will hold the command (``sandbox.layer: off``
        outside plan mode, and ``plan_mode.shell_sandbox: off`` too while planning): a
        command allowed only because an operator rule says it reads is not allowed, so it
        asks (and plan mode refuses it). The built-in judgement stands."""
        if not self.allowed or not self.operator_rules:
            return self
        names = ", ".join(f"`{name}`" for name in self.operator_rules)
        return Verdict(
            False,
            f"the operator rule for {names} only says the command reads, and no read-only "
            "wall holds it here (the sandbox is off), so it asks",
            decided_by=self.decided_by,
        )

    def without_view(self) -> Verdict:
        """This verdict where no sandbox layer hides the host (``sandbox.layer: off``; the
        plan-mode inner wall stops writes, not reads): a line that reads outside the
        workspace and the system paths would read the host itself, so it asks (and plan
        mode refuses it)."""
        if not self.allowed or not self.outside_view:
            return self
        return Verdict(
            False,
            f"`{shown(self.outside_view[0])}` is outside the workspace: the read-only sandbox "
            "shows nothing there, and no sandbox layer hides the host here (the sandbox is "
            "off), so it asks",
            decided_by=self.decided_by,
        )


class Denied(Exception):
    """Raised inside the filter with the reason a command is not read-only, and (once known)
    which rule decided."""

    def __init__(self, reason: str, *decided_by: str) -> None:
        super().__init__(reason)
        self.reason = reason
        self.decided_by = decided_by


def shown(text: str, limit: int = 40) -> str:
    """``text`` shortened for a reason, with control characters made visible."""
    text = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    text = text.replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""Crash soak: SIGKILL the plan-cycle child at random moments and check the database each time.

With ``--postgres`` the soak runs on a real PostgreSQL server started for it, with two
children at once, as two bot processes serving different shards: each works on its own
agents, both fire any overdue deadline, and only the first is killed and restarted while
the second carries on. The checks read one consistent snapshot of the whole database.

Why: "every transition is one SQLite transaction" is a claim about crashes, and only a real
crash tests it. ``_soak_child.py`` runs plan cycles over one database file (two racing
connections, a scheduler, conversation writes); this parent kills it with SIGKILL after a
random delay, restarts it, and after every kill reads the file and checks:

* no plan executed without its approval: every agent executing, every ``step-updated`` and
  every ``completed`` audit row has an earlier ``approved`` row for the same
  ``(plan_id, revision)`` whose ``detail.sha256`` is that revision's sha256;
* no approval lost or applied twice: at most one audit row that ended the revision's wait
  (approved, changes requested, rejected, or timed out or cancelled while submitted) per
  revision, and every approval the child acknowledged (``ACK`` on stdout, written only after
  the commit returned) is in the file;
* nobody stuck: an agent gathering has an idle deadline, one with a submitted plan has an
  approval deadline and its revision row, with the same sha;
* the conversation restored: rows numbered 0..n-1 per agent, each a JSON list of blocks,
  roles alternating from ``user`` as the Messages API requires;
* ``PRAGMA integrity_check`` is ``ok`` (SQLite).

``--phase result`` soaks the decisions on execution results instead: ``_soak_result_child.py``
decides results with Merge, Discard and Roll back through the real ``ExecutionResults`` and
real git in the sandbox; this parent kills it at a random moment inside a decision (between
its ``DECIDING`` and ``DECIDED`` lines), runs a child that only recovers (as the bot does at
its start), and then checks that the record, the branch, the base and the working tree agree
(``check_result_invariants``): no intent open, every decided result with its one completed
intent, and the workspace where the newest result's state says it is.

``--phase two-hosts`` runs two deciding children with different host identities over one
database and workspace, SIGKILLing or SIGSTOPping the first past its lease inside decisions
(``_soak_two_hosts.py``); the second takes over and the same invariants are checked, before
and after the stopped one wakes.

``--phase start`` soaks approvals the same way: the child (``--approvals``) approves plan
after plan through the real ``PlanningService``, each starting its branch under an intent
the approval's transaction completes; kills land inside approvals, and after each restart
(which undoes what a kill interrupted) ``check_start_invariants`` checks that no start is
open, that every execution has its one completed start and no completed start lacks its
execution, and that git matches the plan: approved means the workspace on its branch,
waiting means the workspace on ``main`` exactly as it was reviewed, with no execution branch.

Run with ``.venv/bin/python benchmarks/soak_crash.py [--cycles 200] [--seed N] [--postgres]``.
It prints
cycles, kills, restarts, acknowledged approvals and violations, and exits 1 on any violation
or if the child fails on its own. ``--kills N`` stops killing after N kills (the short soak in
``tests/reliability/test_soak_short.py`` uses it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg.rows import dict_row

from plancord.testing.postgres_server import PostgresServer

CHILD = Path(__file__).with_name("_soak_child.py")
RESULT_CHILD = Path(__file__).with_name("_soak_result_child.py")
DECISIONS = ("approved", "changes-requested", "rejected")
READY_TIMEOUT_SECONDS = 60.0


@dataclass(frozen=True)
class Ack:
    plan_id: str
    revision: int
    sha256: str


@dataclass
class Soak:
    db: str
    kills: int = 0
    restarts: int = 0
    acks: set[Ack] = field(default_factory=set)
    violations: list[str] = field(default_factory=list)
    checks: int = 0


def decides_a_waiting_revision(action: str, detail: dict[str, object]) -> bool:
    """Whether an audit row ended a submitted revision's wait. A timeout or cancel while
    gathering carries the number of the revision sent back earlier, but decides nothing."""
    if action == "timed-out":
        return detail.get("deadline") == "approval"
    if action == "cancelled":
        return detail.get("from") == "submitted"
    return action in DECISIONS


def is_postgres(db: str | Path) -> bool:
    return str(db).startswith("postgresql://")


@contextmanager
def reading(db: str | Path) -> Iterator[Any]:
    """A connection whose queries all see one snapshot, rows readable by column name."""
    if is_postgres(db):
        with psycopg.connect(str(db), row_factory=dict_row) as conn:
            conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            yield conn
    else:
        with closing(sqlite3.connect(db)) as conn:
            conn.row_factory = sqlite3.Row
            conn.execute("BEGIN")
            yield conn


def check_invariants(db: str | Path, acks: set[Ack] | frozenset[Ack] = frozenset()) -> list[str]:
    """Every invariant the soak promises, read from the database; [] when all hold."""
    problems: list[str] = []
    with reading(db) as conn:
        if not is_postgres(db):
            integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
            if integrity != "ok":
                problems.append(f"integrity_check: {integrity}")
        revisions = {
            (r["plan_id"], r["revision"]): r["sha256"]
            for r in conn.execute("SELECT plan_id, revision, sha256 FROM plan_revisions")
        }
        audit = conn.execute(
            "SELECT id, agent, action, plan_id, revision, detail FROM audit_log ORDER BY id"
        ).fetchall()
        approvals: dict[tuple[str, int], list[tuple[int, str | None]]] = {}
        decisions: Counter[tuple[str, int]] = Counter()
        for row in audit:
            key = (row["plan_id"], row["revision"])
            detail = json.loads(row["detail"])
            if decides_a_waiting_revision(row["action"], detail):
                decisions[key] += 1
            if row["action"] == "approved":
                sha = detail.get("sha256")
                approvals.setdefault(key, []).append((row["id"], sha))
                if revisions.get(key) is None:
                    problems.append(f"approval of {key} names no stored revision")
                elif sha != revisions[key]:
                    problems.append(f"approval of {key} carries sha {sha}, not {revisions[key]}")
        for key, count in decisions.items():
            if count > 1:
                problems.append(f"revision {key} was decided {count} times")
        for row in audit:
            if row["action"] not in ("step-updated", "completed"):
                continue
            key = (row["plan_id"], row["revision"])
            earlier = [a for a in approvals.get(key, []) if a[0] < row["id"]]
            if not earlier:
                problems.append(f"{row['action']} (audit {row['id']}) of {key} with no approval")
        for ack in acks:
            key = (ack.plan_id, ack.revision)
            if ack.sha256 not in [sha for _, sha in approvals.get(key, [])]:
                problems.append(f"acknowledged approval of {key} is missing")
        problems += _state_problems(conn, revisions, approvals)
        problems += _conversation_problems(conn)
    return problems


def _state_problems(
    conn: Any,
    revisions: dict[tuple[str, int], str],
    approvals: dict[tuple[str, int], list[tuple[int, str | None]]],
) -> list[str]:
    problems = []
    for state in conn.execute("SELECT * FROM planning_state"):
        agent, phase = state["agent"], state["phase"]
        key = (state["plan_id"], state["revision"])
        if phase == "gathering" and state["idle_deadline"] is None:
            problems.append(f"{agent} is gathering with no deadline")
        if phase == "submitted":
            if state["approval_deadline"] is None:
                problems.append(f"{agent} waits for approval with no deadline")
            if revisions.get(key) != state["plan_sha"]:
                problems.append(f"{agent} waits on {key}, whose stored sha differs or is missing")
        if phase == "executing":
            shas = [sha for _, sha in approvals.get(key, [])]
            if state["plan_sha"] not in shas or revisions.get(key) != state["plan_sha"]:
                problems.append(f"{agent} executes {key} without an approval of its sha")
    return problems


def _conversation_problems(conn: Any) -> list[str]:
    problems = []
    rows = conn.execute("SELECT agent, seq, role, content FROM messages ORDER BY agent, seq")
    expected: dict[str, int] = {}
    last_role: dict[str, str] = {}
    for row in rows:
        agent = row["agent"]
        seq = expected.get(agent, 0)
        if row["seq"] != seq:
            problems.append(f"{agent}: message {row['seq']} follows {seq - 1}")
        expected[agent] = row["seq"] + 1
        role = "user" if last_role.get(agent, "assistant") == "assistant" else "assistant"
        if row["role"] != role:
            problems.append(f"{agent}: message {row['seq']} is {row['role']}, expected {role}")
        last_role[agent] = row["role"]
        try:
            content = json.loads(row["content"])
        except json.JSONDecodeError as exc:
            problems.append(f"{agent}: message {row['seq']} is not JSON ({exc})")
            continue
        if not (
            isinstance(content, list)
            and content
            and all(isinstance(b, dict) and b.get("type") for b in content)
        ):
            problems.append(f"{agent}: message {row['seq']} is not a list of blocks")
    return problems


def completed_cycles(db: str | Path) -> int:
    with reading(db) as conn:
        row = conn.execute("SELECT count(*) AS n FROM audit_log WHERE action = 'completed'")
        return int(row.fetchone()["n"])


async def read_lines(stream: asyncio.StreamReader, soak: Soak, ready: asyncio.Event) -> None:
    while line := await stream.readline():
        words = line.decode().split()
        if words[:1] == ["READY"]:
            ready.set()
        elif words[:1] == ["ACK"] and len(words) == 4:
            soak.acks.add(Ack(words[1], int(words[2]), words[3]))


async def one_life(
    soak: Soak,
    args: argparse.Namespace,
    rng: random.Random,
    stderr: Path,
    *,
    prefix: str = "",
    steady: bool = False,
) -> int | None:
    """Run a child once; kill it after a random delay unless told not to (``--kills``, or a
    ``steady`` child, which runs to the end). Its exit code."""
    with stderr.open("ab") as errors:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            str(CHILD),
            f"--db={soak.db}",
            f"--cycles={args.cycles}",
            f"--agents={args.agents}",
            f"--seed={args.seed * 1000 + soak.restarts + (500 if steady else 0)}",
            f"--prefix={prefix}",
            f"--channel-block={1 if steady else 0}",
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
        )
    if process.stdout is None:
        raise RuntimeError("the child has no stdout")
    ready = asyncio.Event()
    reader = asyncio.create_task(read_lines(process.stdout, soak, ready))
    kill = not steady and (args.kills is None or soak.kills < args.kills)
    try:
        await asyncio.wait_for(ready.wait(), READY_TIMEOUT_SECONDS)
        if kill:
            delay = rng.uniform(0, args.max_delay)
            try:
                await asyncio.wait_for(process.wait(), delay)
            except TimeoutError:
                process.kill()
                soak.kills += 1
        code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        await reader
    return code


async def soak_until_done(
    args: argparse.Namespace, directory: Path, url: str | None = None
) -> Soak:
    """Kill and restart the child until it has done its cycles; with ``url`` (PostgreSQL) a
    second, steady child works beside it the whole time."""
    soak = Soak(db=url or args.db or str(directory / "soak.db"))
    rng = random.Random(args.seed)
    stderr = directory / "child-stderr.log"
    started = time.monotonic()
    prefix = "p0-" if url else ""
    steady = (
        asyncio.create_task(one_life(soak, args, rng, stderr, prefix="p1-", steady=True))
        if url
        else None
    )
    while True:
        code = await one_life(soak, args, rng, stderr, prefix=prefix)
        if is_postgres(soak.db) or os.path.exists(soak.db):  # noqa: ASYNC240
            problems = check_invariants(soak.db, soak.acks)
            soak.checks += 1
            for problem in problems:
                soak.violations.append(f"after life {soak.restarts + 1}: {problem}")
        if code == 0:
            if steady is not None and await steady != 0:
                tail = stderr.read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the steady child failed:\n{tail}")
            if steady is not None:
                soak.checks += 1
                soak.violations += [
                    f"at the end: {p}" for p in check_invariants(soak.db, soak.acks)
                ]
            return soak
        if code != -9:
            tail = stderr.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the child failed on its own (exit {code}):\n{tail}")
        soak.restarts += 1
        if time.monotonic() - started > args.time_limit:
            raise RuntimeError(f"{args.cycles} cycles not done within {args.time_limit} s")


# -- the result phase --------------------------------------------------------------------


def _git(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(workspace), *args], capture_output=True, text=True, check=False
    )
    return done.stdout.strip()


def make_result_workspace(data: Path) -> Path:
    """The agent's workspace: one commit on ``main`` and an ignored file Discard must keep."""
    workspace = data / "agents" / "ada" / "workspace"
    workspace.mkdir(parents=True)
    ident = ["-c", "user.name=soak", "-c", "user.email=soak@soak.invalid"]
    _git(workspace, "init", "--quiet", "-b", "main")
    (workspace / ".gitignore").write_text("*.log\n")
    (workspace / "README.md").write_text("soak\n")
    (workspace / "debug.log").write_text("ignored, kept by Discard\n")
    _git(workspace, "add", "-A")
    _git(workspace, *ident, "commit", "--quiet", "-m", "base")
    return workspace


def check_result_invariants(data: Path) -> list[str]:
    """The record, the branch, the base and the working tree agree; [] when they do."""
    problems: list[str] = []
    workspace = data / "agents" / "ada" / "workspace"
    with closing(sqlite3.connect(data / "soak.db")) as conn:
        conn.row_factory = sqlite3.Row
        open_intents = conn.execute(
            "SELECT action, plan_id FROM result_intents WHERE state = 'open'"
        ).fetchall()
        problems += [f"intent {r['action']} of {r['plan_id']} still open" for r in open_intents]
        rows = conn.execute("SELECT * FROM executions ORDER BY started_at").fetchall()
        done = Counter(
            (r["plan_id"], r["action"])
            for r in conn.execute("SELECT plan_id, action FROM result_intents WHERE state = 'done'")
        )
    for row in rows[:-1]:
        if row["result"] not in ("merged", "discarded"):
            problems.append(f"an older result {row['plan_id']} is {row['result']}")
    for row in rows:
        action = {"merged": "result-merge", "discarded": "result-discard"}.get(row["result"])
        if action is not None and done[(row["plan_id"], action)] != 1:
            problems.append(f"{row['plan_id']} is {row['result']} with {done} completed intents")
    if not rows:
        return problems
    last = rows[-1]
    base = _git(workspace, "rev-parse", "--verify", "--quiet", "refs/heads/main")
    branch = _git(workspace, "rev-parse", "--verify", "--quiet", f"refs/heads/{last['branch']}")
    head = _git(workspace, "symbolic-ref", "--quiet", "HEAD")
    head_commit = _git(workspace, "rev-parse", "--verify", "--quiet", "HEAD")
    dirty = _git(workspace, "status", "--porcelain", "--untracked-files=all")
    where = f"{last['plan_id']} ({last['result']})"
    expected: dict[str, tuple[str, str]] = {}
    if last["result"] == "waiting":
        expected = {
            "HEAD": (head, f"refs/heads/{last['branch']}"),
            "the branch": (branch, last["result_commit"]),
            "the base": (base, last["base_commit"]),
        }
    elif last["result"] == "merged":
        expected = {
            "HEAD": (head, "refs/heads/main"),
            "the base": (base, last["result_commit"]),
            "HEAD's commit": (head_commit, last["result_commit"]),
        }
    elif last["result"] == "discarded":
        expected = {
            "HEAD": (head, "refs/heads/main"),
            "the base": (base, last["base_commit"]),
            "HEAD's commit": (head_commit, last["reviewed_commit"]),
            "the branch": (branch, ""),
        }
    else:
        problems.append(f"{where}: the newest execution has no result")
    for name, (found, want) in expected.items():
        if found != want:
            problems.append(f"{where}: {name} is {found or 'absent'}, the record says {want}")
    if dirty:
        problems.append(f"{where}: the working tree is not what was committed: {dirty[:200]}")
    if not (workspace / "debug.log").is_file():
        problems.append(f"{where}: the ignored file is gone")
    return problems


def make_start_workspace(data: Path) -> Path:
    """The result soak's workspace with an untracked file each approval commits on its
    branch and each undo or Discard must give back untracked."""
    workspace = make_result_workspace(data)
    (workspace / "draft.txt").write_text("reviewed, uncommitted\n")
    return workspace


def check_start_invariants(data: Path) -> list[str]:
    """The plan's state, the executions, the starts and git agree; [] when they do."""
    problems: list[str] = []
    workspace = data / "agents" / "ada" / "workspace"
    with closing(sqlite3.connect(data / "soak.db")) as conn:
        conn.row_factory = sqlite3.Row
        starts = conn.execute("SELECT plan_id, state FROM start_intents").fetchall()
        executions = {r["plan_id"]: r for r in conn.execute("SELECT * FROM executions").fetchall()}
        state = conn.execute("SELECT * FROM planning_state WHERE agent = 'ada'").fetchone()
    problems += [
        f"the start of {r['plan_id']} is still open" for r in starts if r["state"] == "open"
    ]
    done = Counter(r["plan_id"] for r in starts if r["state"] == "done")
    problems += [
        f"{p} executes with {done[p]} completed starts" for p in executions if done[p] != 1
    ]
    problems += [f"{p} was started but has no execution" for p in done if p not in executions]
    head = _git(workspace, "symbolic-ref", "--quiet", "HEAD")
    branches = _git(workspace, "for-each-ref", "--format=%(refname)", "refs/heads/plancord/")
    status = _git(workspace, "status", "--porcelain", "--untracked-files=all")
    phase, plan_id = (state["phase"], state["plan_id"]) if state is not None else ("", None)
    where = f"plan {plan_id} ({phase})"
    if phase == "executing":
        record = executions.get(plan_id)
        if record is None:
            return [*problems, f"{where}: approved with no execution"]
        expected = {
            "HEAD": (head, f"refs/heads/{record['branch']}"),
            "the execution branches": (branches, f"refs/heads/{record['branch']}"),
            "the status": (status, ""),
        }
    elif phase == "submitted":
        if plan_id in executions:
            problems.append(f"{where}: waiting with an execution")
        expected = {
            "HEAD": (head, "refs/heads/main"),
            "the execution branches": (branches, ""),
            "the status": (status, "?? draft.txt"),
        }
    else:
        expected = {}
    for name, (found, want) in expected.items():
        if found != want:
            problems.append(f"{where}: {name} is {found or 'empty'!r}, expected {want!r}")
    if not (workspace / "debug.log").is_file():
        problems.append(f"{where}: the ignored file is gone")
    return problems


@dataclass
class ResultSoak:
    decisions: int = 0
    kills: int = 0
    refused: int = 0
    checks: int = 0
    violations: list[str] = field(default_factory=list)
    killed_during: Counter[str] = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)
    approvals: bool = False
    """Approvals (``--phase start``) rather than decisions on results."""


async def _result_child(data: Path, *args: str, stderr: Path) -> asyncio.subprocess.Process:
    with stderr.open("ab") as errors:
        return await asyncio.create_subprocess_exec(
            sys.executable,
            str(RESULT_CHILD),
            f"--data={data}",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=errors,
        )


async def _recover_and_check(
    soak: ResultSoak, data: Path, stderr: Path, when: str, *args: str
) -> None:
    process = await _result_child(data, "--recover-only", *args, stderr=stderr)
    await process.communicate()
    if process.returncode != 0:
        tail = (await asyncio.to_thread(stderr.read_text, errors="replace"))[-3000:]
        raise RuntimeError(f"the recovering child failed (exit {process.returncode}):\n{tail}")
    _check(soak, data, when)


def _check(soak: ResultSoak, data: Path, when: str) -> None:
    soak.checks += 1
    check = check_start_invariants if soak.approvals else check_result_invariants
    soak.violations += [f"{when}: {p}" for p in check(data)]


async def result_phase(args: argparse.Namespace, data: Path) -> ResultSoak:
    """Kill the deciding child inside decisions (approvals with ``--phase start``) until
    ``args.cycles`` kills (or the child has decided that many), checking after every
    restart."""
    soak = ResultSoak(approvals=args.phase == "start")
    mode = ("--approvals",) if soak.approvals else ()
    rng = random.Random(args.seed)
    stderr = data / "child-stderr.log"
    (make_start_workspace if soak.approvals else make_result_workspace)(data)
    started = time.monotonic()
    life = 0
    window = 0.3
    while soak.kills < args.cycles and time.monotonic() - started < args.time_limit:
        life += 1
        process = await _result_child(
            data, f"--cycles={10**6}", f"--seed={args.seed * 1000 + life}", *mode, stderr=stderr
        )
        if process.stdout is None or process.stdin is None:
            raise RuntimeError("the child has no stdin or stdout")
        action = ""
        while line := (await process.stdout.readline()).decode():
            words = line.split()
            if words[:1] == ["DECIDING"]:
                action = words[1]
                # The window follows how long decisions take on this machine now: it grows
                # after a kill and shrinks after a decision that finished first, so kills
                # land all along a decision, and now and then just past its end.
                delay = rng.uniform(0, window)
                try:
                    line = (await asyncio.wait_for(process.stdout.readline(), delay)).decode()
                except TimeoutError:
                    process.kill()
                    await process.wait()
                    soak.kills += 1
                    soak.killed_during[action] += 1
                    window *= 1.15
                    break
                window = max(0.05, window * 0.85)
                while line.startswith("REFUSED"):
                    soak.refused += 1
                    line = (await process.stdout.readline()).decode()
            if line.startswith("REFUSED"):
                soak.refused += 1
            elif line.startswith("DECIDED"):
                soak.decisions += 1
                soak.seconds.append(float(line.split()[1]))
                _check(soak, data, f"after decision {soak.decisions}")
                if soak.kills >= args.cycles:
                    break
                process.stdin.write(b"next\n")
                await process.stdin.drain()
        if process.returncode is None:
            process.kill()
            await process.wait()
        if process.returncode not in (-9, 0):
            tail = stderr.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the child failed on its own (exit {process.returncode}):\n{tail}")
        await _recover_and_check(soak, data, stderr, f"after restart {life}", *mode)
    return soak


def result_main(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="plancord-soak-results-") as name:
        started = time.monotonic()
        soak = asyncio.run(result_phase(args, Path(name)))
        elapsed = time.monotonic() - started
    during = ", ".join(f"{k} {v}" for k, v in sorted(soak.killed_during.items()))
    mean = sum(soak.seconds) / len(soak.seconds) if soak.seconds else 0.0
    print(
        f"{args.phase} phase: kills {soak.kills} ({during})  "
        f"{'approvals' if soak.approvals else 'decisions'} completed {soak.decisions}  "
        f"refused {soak.refused}  invariant checks {soak.checks}  "
        f"violations {len(soak.violations)}  (decision {mean * 1000:.0f} ms mean; "
        f"{elapsed:.1f} s; load {os.getloadavg()[0]:.1f})"
    )
    for violation in soak.violations[:50]:
        print(f"VIOLATION {violation}")
    return 1 if soak.violations else 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=200, help="plan cycles to complete")
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-delay", type=float, default=0.4, help="seconds before a kill")
    parser.add_argument("--kills", type=int, default=None, help="stop killing after this many")
    parser.add_argument("--db", default=None, help="database file (default: a temporary one)")
    parser.add_argument("--time-limit", type=float, default=300.0)
    parser.add_argument(
        "--phase",
        choices=("plan", "result", "start", "two-hosts"),
        default="plan",
        help="plan cycles (the default), decisions on execution results or approvals "
        "starting executions (--cycles kills)",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="two children on a real PostgreSQL server started for the soak, one killed",
    )
    return parser.parse_args(argv)


def two_hosts_main(args: argparse.Namespace) -> int:
    """``--phase two-hosts`` (``_soak_two_hosts``): events are kills and stops of host A."""
    from _soak_two_hosts import two_host_phase

    soak = ResultSoak()
    with tempfile.TemporaryDirectory(prefix="plancord-soak-hosts-") as name:
        data = Path(name)
        make_result_workspace(data)
        started = time.monotonic()
        counts = asyncio.run(
            two_host_phase(args, data, RESULT_CHILD, soak, lambda when: _check(soak, data, when))
        )
        elapsed = time.monotonic() - started
    print(
        f"two-hosts phase: events {counts['kills'] + counts['stops']} (kills {counts['kills']}, "
        f"stops past the lease {counts['stops']}, of which the woken host was refused "
        f"{counts['stopped-and-refused']})  decisions completed {counts['decided']}  "
        f"invariant checks {soak.checks}  violations {len(soak.violations)}  ({elapsed:.1f} s)"
    )
    for violation in soak.violations[:50]:
        print(f"VIOLATION {violation}")
    return 1 if soak.violations else 0


def main(argv: list[str]) -> int:
    args = parse(argv)
    if args.phase == "two-hosts":
        return two_hosts_main(args)
    if args.phase in ("result", "start"):
        return result_main(args)
    server = PostgresServer.start(durable=True) if args.postgres else None
    try:
        url = server.url(server.create_database()) if server else None
        with tempfile.TemporaryDirectory(prefix="plancord-soak-") as name:
            started = time.monotonic()
            soak = asyncio.run(soak_until_done(args, Path(name), url))
            elapsed = time.monotonic() - started
            cycles = completed_cycles(soak.db)
    finally:
        if server is not None:
            server.stop()
    if server is not None:
        print(f"PostgreSQL, two processes ({args.agents} agents each), the first one killed:")
    print(
        f"cycles {cycles}  kills {soak.kills}  restarts {soak.restarts}  "
        f"acknowledged approvals {len(soak.acks)}  invariant checks {soak.checks}  "
        f"violations {len(soak.violations)}  ({elapsed:.1f} s)"
    )
    for violation in soak.violations[:50]:
        print(f"VIOLATION {violation}")
    return 1 if soak.violations else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

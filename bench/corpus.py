"""A synthetic but realistic memory corpus: tasks with steps, errors, commands, patches.

Deterministic by seed: task ``i`` depends only on (seed, i), so a smaller corpus is a
prefix of a larger one and the embedding cache is shared between sizes. Every task is an
incident in one component (``ledger-worker``) of one domain (Python web, Java, Postgres,
Oracle, Go, C, Kubernetes, Rust): reported with an error full of instance details,
diagnosed with a tool, tried, and (mostly) fixed with a patch. Questions are asked later in
other words; the right answers are the episodes of every task with the same component and
problem, so R@k is known for any retriever.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bench.vocabulary import (
    COMPONENT_NOUNS,
    COMPONENT_ROLES,
    DETAIL_NOUNS,
    DETAIL_VERBS,
    DOMAINS,
    Domain,
    Problem,
)

__all__ = ["Corpus", "Query", "Task"]

PROJECT = "bench"
_START = datetime(2024, 1, 1, tzinfo=UTC)
_ATTEMPTS = (
    (
        "restarted {component} to see whether the problem comes back",
        "systemctl restart {component}",
    ),
    ("raised the timeout of {component} to {m} seconds", "export TIMEOUT={m} && ./run.sh"),
    ("rolled {component} back to the previous release", "git revert --no-edit HEAD~{n}"),
    ("added debug logging around {detail} in {component}", "git grep -n {detail} src/"),
    ("scaled {component} to {m} replicas", "kubectl scale deploy/{component} --replicas={m}"),
    ("cleared the cache of {component}", "redis-cli -h {host} FLUSHDB"),
    ("ran the test suite of {component} with more verbosity", "make test V=1 TARGET={detail}"),
)
_OBSERVE = (
    "{ts} INFO  {component} started on {host}:{n} (pid {pid})",
    "{ts} DEBUG {component} processed batch {uid} in {m} ms",
    "{ts} WARN  {component} retrying {detail} after {m} ms (attempt {n})",
    "{ts} INFO  {component} health check ok, {n} requests in flight",
    "{ts} DEBUG {component} loaded config from {path}",
)


@dataclass(frozen=True)
class Task:
    index: int
    id: str
    domain: Domain
    problem: Problem
    component: str
    detail: str
    records: tuple[dict[str, Any], ...]  # the task, then its episodes in order

    @property
    def key(self) -> tuple[str, str]:
        """What a question about this incident names: the component and the problem."""
        return (self.component, f"{self.domain.name}/{self.problem.name}")

    @property
    def episode_ids(self) -> list[str]:
        return [r["id"] for r in self.records[1:]]


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    error: str | None
    relevant: frozenset[str]
    task_id: str


def _names(component: str, detail: str) -> dict[str, str]:
    snake = component.replace("-", "_")
    return {
        "component": component,
        "component_snake": snake,
        "component_class": "".join(p.title() for p in component.split("-")),
        "detail": detail,
        "detail_class": "".join(p.title() for p in detail.split("_")),
        "detail_upper": detail.upper(),
    }


def _instance(rng: random.Random, when: datetime) -> dict[str, str]:
    """The details abstraction has to lift: numbers, ids, hosts, paths, timestamps."""
    return {
        "n": str(rng.randint(2, 99999)),
        "m": str(rng.randint(2, 4096)),
        "pct": str(rng.randint(5, 95)),
        "pid": str(rng.randint(1000, 65000)),
        "uid": f"{rng.getrandbits(48):012x}",
        "host": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "path": f"/home/{rng.choice(['ana', 'li', 'sam', 'kofi', 'ines'])}/work/"
        f"{rng.choice(['cfg', 'data', 'in'])}/{rng.getrandbits(24):06x}.json",
        "ts": when.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
    }


def _fill(template: str, values: dict[str, str]) -> str:
    return template.format(**values)


class Corpus:
    """The corpus of ``size`` episodes for ``seed``, and questions about it."""

    def __init__(self, seed: int, size: int, project: str = PROJECT) -> None:
        self.seed = seed
        self.size = size
        self.project = project

    def tasks(self) -> Iterator[Task]:
        made = 0
        index = 0
        while made < self.size:
            task = self._task(index, self.size - made)
            made += len(task.records) - 1
            index += 1
            yield task

    def records(self) -> Iterator[dict[str, Any]]:
        for task in self.tasks():
            yield from task.records

    def _task(self, index: int, room: int) -> Task:
        rng = random.Random(f"{self.seed}:{index}")
        domain = rng.choice(DOMAINS)
        problem = rng.choice(domain.problems)
        component = f"{rng.choice(COMPONENT_NOUNS)}-{rng.choice(COMPONENT_ROLES)}"
        detail = f"{rng.choice(DETAIL_VERBS)}_{rng.choice(DETAIL_NOUNS)}"
        names = _names(component, detail)
        started = _START + timedelta(minutes=37 * index + rng.randint(0, 30))
        task_id = f"task-{self.seed}-{index:06d}"
        fixed = rng.random() < 0.85
        cause = rng.choice(problem.causes).format(**names)
        steps = self._steps(rng, domain, problem, names, started, cause, fixed)[:room]
        env = {
            "os": rng.choice(domain.os).split(" ")[0],
            "os_version": rng.choice(domain.os).split(" ")[-1],
            "runtime": domain.runtime,
            "runtime_version": rng.choice(domain.versions),
            "packages": {n: rng.choice(v) for n, v in rng.sample(domain.packages, 2)},
        }
        tags = [f"component:{component}", f"area:{domain.name}", f"problem:{problem.name}"]
        task = {
            "record_type": "task",
            "project": self.project,
            "id": task_id,
            "goal": _fill(problem.written[0], names).capitalize(),
            "status": "resolved" if fixed else "abandoned",
            "outcome": "success" if fixed else "failure",
            "tags": tags,
            "agent": rng.choice(("agent-a", "agent-b", "sre-oncall")),
            "started_at": started.isoformat(),
        }
        episodes = []
        for step, (when, fields) in enumerate(steps):
            episodes.append(
                {
                    "record_type": "episode",
                    "project": self.project,
                    "id": f"{task_id}:{step}",
                    "task_id": task_id,
                    "step": step,
                    "kind": "step",
                    "source": "executed",
                    "created_at": when.isoformat(),
                    "environment": env,
                    "tags": [*tags, f"tool:{fields.pop('tool')}"],
                    **fields,
                }
            )
        return Task(index, task_id, domain, problem, component, detail, (task, *episodes))

    def _steps(
        self,
        rng: random.Random,
        domain: Domain,
        problem: Problem,
        names: dict[str, str],
        started: datetime,
        cause: str,
        fixed: bool,
    ) -> list[tuple[datetime, dict[str, Any]]]:
        when = started
        out: list[tuple[datetime, dict[str, Any]]] = []

        def later() -> dict[str, str]:
            nonlocal when
            when = when + timedelta(minutes=rng.randint(3, 90))
            return {**names, **_instance(rng, when), "cause": cause}

        values = later()
        error = _fill(rng.choice(problem.errors), values)
        noise = [_fill(rng.choice(_OBSERVE), later()) for _ in range(rng.randint(1, 4))]
        out.append(
            (
                when,
                {
                    "title": f"{names['component']}: " + _fill(problem.written[0], values),
                    "summary": _fill(rng.choice(problem.written), values).capitalize(),
                    "action": {"type": "command", "command": _reproduce(domain, values)},
                    "observation": "\n".join([*noise, error]),
                    "error": error,
                    "outcome": "failure",
                    "tool": domain.tools[0],
                },
            )
        )
        values = later()
        finding = _fill(rng.choice(problem.findings), values)
        out.append(
            (
                when,
                {
                    "summary": f"Diagnosed with {domain.tools[1]}: {finding}",
                    "reasoning": f"Suspected that {cause}; checked it directly.",
                    "action": {
                        "type": "command",
                        "command": _fill(rng.choice(problem.diagnosis), values),
                    },
                    "observation": finding + "\n" + _fill(rng.choice(_OBSERVE), values),
                    "outcome": "success",
                    "tool": domain.tools[1],
                },
            )
        )
        for attempt in rng.sample(_ATTEMPTS, rng.randint(0, 3)):
            values = later()
            again = _fill(rng.choice(problem.errors), values)
            out.append(
                (
                    when,
                    {
                        "summary": _fill(attempt[0], values).capitalize() + "; it did not help",
                        "action": {"type": "command", "command": _fill(attempt[1], values)},
                        "observation": _fill(rng.choice(_OBSERVE), values) + "\n" + again,
                        "outcome": "failure",
                        "tool": rng.choice(domain.tools),
                    },
                )
            )
        if fixed:
            values = later()
            fix = _fill(rng.choice(problem.fixes), values)
            file = f"src/{names['component_snake']}/{names['detail']}.{domain.extension}"
            patch = _fill(problem.patch, {**values, "file": file})
            out.append(
                (
                    when,
                    {
                        "summary": f"Fixed: {fix}; root cause: {cause}",
                        "reasoning": f"The diagnosis showed that {cause}.",
                        "action": {
                            "type": "edit",
                            "command": f"git apply fix-{values['uid']}.patch",
                        },
                        "observation": f"{names['component']} stable for {values['m']} minutes "
                        "under production load",
                        "outcome": "success",
                        "tool": "git",
                        "snippets": [
                            {
                                "code": patch,
                                "language": problem.language,
                                "kind": "patch" if problem.language == "diff" else "sql",
                                "description": fix,
                                "relation": "GENERATED",
                            }
                        ],
                    },
                )
            )
        return out

    def queries(self, count: int) -> list[Query]:
        """``count`` questions about tasks of this corpus, with every right answer."""
        tasks = list(self.tasks())
        by_key: dict[tuple[str, str], list[str]] = defaultdict(list)
        for task in tasks:
            by_key[task.key].extend(task.episode_ids)
        rng = random.Random(f"{self.seed}:queries:{self.size}")
        chosen = rng.sample(tasks, min(count, len(tasks)))
        out = []
        for number, task in enumerate(chosen):
            names = _names(task.component, task.detail)
            spoken = {**names, "component": task.component.replace("-", " ")}
            text = _fill(rng.choice(task.problem.asked), spoken)
            error = None
            if number % 2 == 0:  # half the callers paste the error they see now
                values = {**names, **_instance(rng, _START + timedelta(days=900))}
                error = _fill(rng.choice(task.problem.errors), values)
            else:
                text += f", around {task.detail.replace('_', ' ')}"
            out.append(Query(f"q{number:04d}", text, error, frozenset(by_key[task.key]), task.id))
        return out


def _reproduce(domain: Domain, values: dict[str, str]) -> str:
    commands = {
        "python": "python -m {component_snake}.main --config {path}",
        "java": "java -Xmx512m -jar {component}.jar --spring.profiles.active=prod",
        "postgresql": "psql -h {host} -f jobs/{detail}.sql",
        "oracle": "sqlplus app@{host}/orcl @jobs/{detail}.sql",
        "go": "go run ./cmd/{component} --addr {host}:{n}",
        "gcc": "./{component} --input {path}",
        "kubernetes": "kubectl get pods -n prod -l app={component}",
        "rust": "cargo run -p {component} -- --listen {host}:{n}",
    }
    return _fill(commands[domain.runtime], values)

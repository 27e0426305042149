"""Adversarial streams: the same replay with workers who game screening (``StreamSettings``).

* ``spammers-first``: the workers under the bar (recorded accuracy < ``bar``) take the
  earliest first requests of the stream, the one with the most recorded answers first, each
  keeping its pace; the others keep their order. The order that lets unscreened spammers
  drive an early consensus.
* ``collude-20`` / ``collude-40``: a seeded 20% / 40% of the workers form one group; on each
  task item every member gives the group's one shared wrong label (a seeded wrong class among
  the item's classes). On gold they answer as recorded, so gold sees them as they were.
* ``recognise-10``: a seeded 10% of the workers recognise gold: right on every gold question,
  at chance on real tasks (a uniform draw among the item's classes).

An item's classes are the labels recorded on it with its truth, or, where that leaves one
class, every label of the dataset. Colluding and recognising need categorical answers: a
graded dataset is refused. Every draw comes from a child of the stream's generator, so the
rest of the stream (gold items, answer orders, arrivals) is the real order's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, get_args

import numpy as np

__all__ = [
    "ADVERSARIES",
    "GROUPS",
    "Adversaries",
    "Adversary",
    "Role",
    "arrivals_spammers_first",
    "group",
    "item_classes",
]

Adversary = Literal["spammers-first", "collude-20", "collude-40", "recognise-10"]
ADVERSARIES: tuple[Adversary, ...] = get_args(Adversary)
Role = Literal["honest", "colluder", "recogniser"]

#: The group each adversary forms: its members' role and their share of the workers.
GROUPS: dict[Adversary, tuple[Role, float]] = {
    "collude-20": ("colluder", 0.2),
    "collude-40": ("colluder", 0.4),
    "recognise-10": ("recogniser", 0.1),
}


def group(
    adversary: Adversary, workers: Sequence[str], rng: np.random.Generator
) -> dict[str, Role]:
    """The adversary's members and their role: a seeded share of ``workers`` (at least one);
    none for ``spammers-first``, which changes who comes first, not how anyone answers."""
    if adversary not in GROUPS:
        return {}
    role, share = GROUPS[adversary]
    size = max(1, round(share * len(workers)))
    chosen = rng.choice(len(workers), size=size, replace=False)
    return {workers[int(i)]: role for i in sorted(chosen.tolist())}


class Adversaries:
    """An adversarial stream's group and how its members label real tasks: a colluder gives
    the group's wrong label of the item, a recogniser a uniform draw among its classes. The
    group is drawn first, then the wrong labels of ``truth``'s items in sorted order."""

    def __init__(
        self,
        adversary: Adversary,
        workers: Sequence[str],
        answer_set: Mapping[str, Sequence[str]],
        truth: Mapping[str, str],
        rng: np.random.Generator,
    ) -> None:
        self.roles = group(adversary, workers, rng)
        self.classes = item_classes(answer_set, truth)
        self.wrong: dict[str, str] = {}  # item -> the colluders' shared wrong label
        for item in sorted(truth):
            wrong = [c for c in self.classes[item] if c != truth[item]] or ["(wrong)"]
            self.wrong[item] = wrong[int(rng.integers(len(wrong)))]
        self._rng = rng

    def label(self, role: Role, item: str) -> str:
        """A member's label of a real task item (``role``: not "honest")."""
        if role == "colluder":
            return self.wrong[item]
        classes = self.classes[item]
        return classes[int(self._rng.integers(len(classes)))]

    def task_accuracy(self, role: Role, items: Sequence[str]) -> float:
        """A member's accuracy on real tasks: a colluder is never right; a recogniser is right
        by chance, 1 / classes, on average over ``items`` (its task items; every item if none)."""
        if role == "colluder":
            return 0.0
        chances = [1.0 / len(self.classes[item]) for item in items or sorted(self.classes)]
        return float(np.mean(chances))


def arrivals_spammers_first(
    starts: np.ndarray, answers: np.ndarray, under_bar: np.ndarray
) -> np.ndarray:
    """Arrival times (each worker's first request) with the workers under the bar given the
    earliest of ``starts``, the one with the most ``answers`` first (ties: the earlier drawn
    arrival); the others get the rest in the order they were drawn in."""
    spammers = np.flatnonzero(under_bar)
    spammers = spammers[np.lexsort((starts[spammers], -answers[spammers]))]
    others = np.flatnonzero(~under_bar)
    others = others[np.argsort(starts[others], kind="stable")]
    arrived = np.empty_like(starts)
    arrived[np.concatenate([spammers, others])] = np.sort(starts)
    return arrived


def item_classes(
    answer_set: Mapping[str, Sequence[str]], truth: Mapping[str, str]
) -> dict[str, list[str]]:
    """Per item, its classes (the module docstring): sorted, the truth among them."""
    every = sorted({a for answers in answer_set.values() for a in answers} | set(truth.values()))
    classes = {}
    for item, right in truth.items():
        own = sorted(set(answer_set.get(item, ())) | {right})
        classes[item] = own if len(own) > 1 else every
    return classes

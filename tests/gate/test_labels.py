"""Task labels reach the gate: one per worker and item, a retry counted once, refused whole
when malformed, and counted in the gate's summary."""

from __future__ import annotations

import pytest

from screener.errors import ConfigError, UnknownWorkerError
from screener.gate import FirstGold, Gate, GateSettings, LabelOutcome
from screener.gate.labels import TaskLabels, label_text


def _gate_with(*workers: str) -> Gate:
    gate = Gate(GateSettings(policy=FirstGold(), max_unscreened=0))
    for worker in workers:
        gate.next(worker)
    return gate


def test_the_first_label_of_an_item_counts_and_a_second_is_a_duplicate() -> None:
    gate = _gate_with("ann", "bob")
    assert gate.tell_label("ann", "i1", "cat") is LabelOutcome.ACCEPTED
    assert gate.tell_label("ann", "i1", "dog") is LabelOutcome.DUPLICATE
    assert gate.tell_label("bob", "i1", "dog") is LabelOutcome.ACCEPTED
    assert gate.labels.of_item("i1") == {"ann": "cat", "bob": "dog"}
    assert gate.summary()["labels"] == 2 and gate.workers["ann"].labels == 1


def test_a_retried_request_gets_its_first_outcome_and_changes_nothing() -> None:
    gate = _gate_with("ann")
    assert gate.tell_label("ann", "i1", 1, request_id="r1") is LabelOutcome.ACCEPTED
    assert gate.tell_label("ann", "i1", 1, request_id="r1") is LabelOutcome.ACCEPTED
    assert gate.tell_label("ann", "i1", 1, request_id="r2") is LabelOutcome.DUPLICATE
    assert gate.labels.count == 1
    labels = TaskLabels()
    labels.add("ann", "i1", "x", "r9")
    with pytest.raises(ConfigError, match="was made for worker 'ann'"):
        labels.add("bob", "i1", "x", "r9")


def test_each_id_and_label_is_kept_once_however_many_labels_name_it() -> None:
    """Every request brings its own copies of the strings (JSON decoding makes new ones):
    the labels keep one, so memory grows by the labels, not by their text."""

    def fresh(text: str) -> str:  # a new string object, as a decoded request's
        return "".join(list(text))

    labels = TaskLabels()
    for worker in ("ann", "bob", "cy"):
        labels.add(fresh(worker), fresh("item-7"), fresh("positive"))
        labels.add(fresh(worker), fresh("item-8"), fresh("positive"))
    kept = labels.of_item("item-7")
    assert len({id(label) for label in kept.values()}) == 1
    assert len({id(item) for w in kept for item in labels.items_of(w)}) == 2
    assert {id(w) for w in kept} == {id(w) for w in labels.of_item("item-8")}


def test_labels_of_unknown_workers_and_malformed_labels_are_refused_unused() -> None:
    gate = _gate_with("ann")
    with pytest.raises(UnknownWorkerError, match="never asked this gate"):
        gate.tell_label("zed", "i1", "cat")
    for item, label in [("", "cat"), ("i1", ""), ("i1", None), ("i1", float("nan")),
                        ("i1", True), ("i1", "x" * 5000), ("i1", [1])]:  # fmt: skip
        with pytest.raises(ConfigError):
            gate.tell_label("ann", item, label)
    assert gate.labels.count == 0 and gate.labels.by_item == {}


@pytest.mark.parametrize(
    ("given", "kept"), [("cat", "cat"), (1, "1"), (1.0, "1"), ("1", "1"), (0.25, "0.25"),
                        (-3, "-3"), (1e20, "1e+20")],
)  # fmt: skip
def test_a_number_and_its_text_are_one_label(given: object, kept: str) -> None:
    assert label_text(given) == kept

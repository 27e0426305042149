"""The API helpers shared by client and service: signatures, paths and parsing."""

from __future__ import annotations

import hashlib
import hmac

import pytest

from screener.oracles.http.protocol import (
    AnswerItem,
    ApiFormatError,
    Assignment,
    Malformed,
    Question,
    Rejection,
    answers_body,
    assignment_path,
    parse_answer_items,
    parse_answer_page,
    parse_assignments,
    parse_submit_result,
    parse_webhook_config,
    sign,
    verify,
)


def test_signature_matches_rfc_4231_vector() -> None:
    # RFC 4231, test case 2.
    expected = "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    assert sign("Jefe", b"what do ya want for nothing?") == "sha256=" + expected


def test_verify_accepts_only_the_right_secret_and_body() -> None:
    body = b'{"answers": []}'
    signature = sign("s" * 32, body)
    assert verify("s" * 32, body, signature)
    assert verify("s" * 32, body, f"  {signature} ")
    assert not verify("t" * 32, body, signature)
    assert not verify("s" * 32, body + b" ", signature)
    assert not verify("s" * 32, body, None)
    assert not verify("s" * 32, body, signature.removeprefix("sha256="))
    bare = hmac.new(b"s" * 32, body, hashlib.sha256).hexdigest()
    assert not verify("s" * 32, body, "sha1=" + bare)


def test_assignment_round_trip_and_path_quoting() -> None:
    assignment = Assignment("run-7", "w 1", Question("q1", {"text": "What is 2 + 2?"}))
    assert parse_assignments({"assignments": [assignment.to_json()]}) == [assignment]
    assert assignment_path("a/b c") == "/v1/assignments/a%2Fb%20c"


@pytest.mark.parametrize(
    "body",
    [
        [],
        {"assignments": {}},
        {"assignments": [{"id": "a", "worker": "w"}]},
        {"assignments": [{"id": "", "worker": "w", "question": {"id": "q"}}]},
        {"assignments": [{"id": "a" * 300, "worker": "w", "question": {"id": "q"}}]},
        {"assignments": [{"id": 3, "worker": "w", "question": {"id": "q"}}]},
        {"assignments": [{"id": "a", "worker": "w", "question": {"payload": 1}}]},
    ],
    ids=["not-object", "not-list", "no-question", "empty-id", "long-id", "int-id", "no-qid"],
)
def test_bad_assignment_requests_are_refused_whole(body: object) -> None:
    with pytest.raises(ApiFormatError, match="malformed"):
        parse_assignments(body)


def test_submit_result_must_cover_every_id_sent() -> None:
    reply = {"accepted": ["a"], "rejected": [{"id": "b", "reason": "unavailable: gone"}]}
    result = parse_submit_result(reply, ["a", "b"])
    assert result.accepted == ("a",)
    assert result.rejected == (Rejection("b", "unavailable: gone"),)
    assert parse_submit_result(result.to_json(), ["a", "b"]) == result
    with pytest.raises(ApiFormatError, match="neither accepted nor rejected"):
        parse_submit_result(reply, ["a", "b", "c"])
    with pytest.raises(ApiFormatError):
        parse_submit_result({"accepted": [1], "rejected": []}, [])


def test_answer_items_keep_the_good_ones_and_name_the_bad_ones() -> None:
    body = {
        "answers": [
            {"id": "r-1", "answer": "Paris"},
            {"id": "r-2", "answer": 42},
            {"id": "r-3", "unavailable": "unavailable: left"},
            {"id": "r-4", "answer": True},
            {"id": "r-5"},
            {"answer": "orphan"},
            "junk",
        ]
    }
    items, malformed = parse_answer_items(body)
    assert items == [
        AnswerItem("r-1", answer="Paris"),
        AnswerItem("r-2", answer=42),
        AnswerItem("r-3", unavailable="unavailable: left"),
    ]
    assert [m.id for m in malformed] == ["r-4", "r-5", None, None]
    assert all(isinstance(m, Malformed) and m.reason.startswith("malformed") for m in malformed)


def test_answer_page_needs_a_cursor() -> None:
    items = [AnswerItem("a", answer=1.5), AnswerItem("b", unavailable="unavailable: x")]
    page = parse_answer_page(answers_body(items, "7"))
    assert page.items == tuple(items)
    assert page.cursor == "7"
    with pytest.raises(ApiFormatError, match="cursor"):
        parse_answer_page(answers_body(items))


def test_answer_item_carries_exactly_one_value() -> None:
    with pytest.raises(ValueError):
        AnswerItem("a")
    with pytest.raises(ValueError):
        AnswerItem("a", answer="x", unavailable="y")


def test_webhook_config() -> None:
    config = parse_webhook_config({"url": "http://127.0.0.1:9/hook", "secret": "x" * 16})
    assert config.url == "http://127.0.0.1:9/hook"
    assert parse_webhook_config({"url": None}).url is None
    with pytest.raises(ApiFormatError, match="secret"):
        parse_webhook_config({"url": "http://127.0.0.1:9/hook", "secret": "short"})
    with pytest.raises(ApiFormatError, match="url"):
        parse_webhook_config({"url": "ftp://example.org", "secret": "x" * 16})

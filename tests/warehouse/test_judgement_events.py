"""One shape for a judgement in every family (issue #10): `judge_verdict`, `answer_graded` and
`relevance_graded` say how the call ended (parsed | unparsed | failed) and, when it failed, why;
pre-v2 grade events are lifted on read. (What a failed judgement scores is the marts' rule: the
dbt unit tests of int_qa_answers_graded / int_qa_chunks_graded and draco_met_scored.)"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from warehouse.events import AnswerGraded, JudgeVerdict, RelevanceGraded, parse_payload
from warehouse.upcasters import upcast

GRADE = dict(
    lane="brave_search",
    item_id="q1",
    attempt=1,
    grader_id="simpleqa-official@abc:gpt-4.1",
    official=True,
    source_event_id="e1",
)
RELEVANCE = dict(
    lane="brave_search", item_id="q1", attempt=1, rank=3, judge_id="j", source_event_id="c1"
)


def _v1(event_type: str, payload: dict) -> dict:
    return {"event_type": event_type, "schema_version": 1, "payload": payload}


@pytest.mark.parametrize("parse_ok, outcome", [(True, "parsed"), (False, "unparsed")])
def test_a_v1_grade_is_lifted_to_the_outcome_its_parse_flag_says(parse_ok, outcome):
    v1 = {**GRADE, "grade": "A", "label": "correct", "parse_ok": parse_ok, "llm": None}
    lifted = upcast(_v1("answer_graded", v1))
    assert lifted["schema_version"] == 2 and lifted["payload"]["outcome"] == outcome
    graded = parse_payload("answer_graded", lifted["payload"])
    assert (graded.outcome, graded.parse_ok, graded.error_class) == (outcome, parse_ok, None)

    relevance = upcast(_v1("relevance_graded", {**RELEVANCE, "grade": 2, "parse_ok": parse_ok}))
    assert parse_payload("relevance_graded", relevance["payload"]).outcome == outcome


def test_a_failed_grade_says_why_and_is_not_parsed():
    failed = AnswerGraded(
        **GRADE,
        outcome="failed",
        grade="B",
        label="incorrect",
        parse_ok=False,
        error_class="timeout",
        error_message="openai:gpt-4.1: timed out",
    )
    assert failed.llm is None
    with pytest.raises(ValidationError, match="says why"):
        AnswerGraded(**GRADE, outcome="failed", grade="B", label="incorrect", parse_ok=False)
    with pytest.raises(ValidationError, match="parse_ok"):
        AnswerGraded(**GRADE, outcome="unparsed", grade="B", label="incorrect", parse_ok=True)
    with pytest.raises(ValidationError, match="parse_ok"):
        RelevanceGraded(**RELEVANCE, outcome="failed", grade=0, parse_ok=True, error_class="t")
    with pytest.raises(ValidationError, match="says why"):
        RelevanceGraded(**RELEVANCE, outcome="failed", grade=0, parse_ok=False)


def test_a_failed_judge_verdict_says_why_as_a_failed_grade_does():
    verdict = dict(
        lane="local-rag",
        item_id="t1",
        attempt=1,
        judge_id="j",
        criterion_id="c1",
        sample=1,
        polarity="positive",
        verdict=None,
        met=False,
        source_event_id="r1",
    )
    assert JudgeVerdict(**verdict, outcome="failed", error_class="http_status").met is False
    with pytest.raises(ValidationError, match="says why"):
        JudgeVerdict(**verdict, outcome="failed")
    assert set(JudgeVerdict.model_fields) >= {"outcome", "error_class", "error_message"}
    assert {"outcome", "error_class", "error_message"} <= set(AnswerGraded.model_fields)

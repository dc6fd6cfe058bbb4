"""The fact model: normalisation, validation, immutability, serialisation."""

from __future__ import annotations

import copy
import json
import pickle
import time
import uuid
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shared_core.errors import InvalidInputError
from shared_core.facts import (
    Fact,
    FactKey,
    FactStatus,
    Reason,
    ReasonKind,
    decode_object,
    encode_object,
    key_relation,
    new_fact_id,
    normalize_object,
    normalize_relation,
    normalize_subject,
    normalize_text,
)

WHEN = datetime(2024, 5, 1, tzinfo=UTC)


def test_keys_normalise_unicode_case_and_spacing() -> None:
    fact = Fact(text="x", subject="  \uff2daria   SILVA ", relation="Lives-In", object="Berlin")
    assert fact.key == FactKey("default", "maria silva", "lives_in")
    assert fact.subject == "  \uff2daria   SILVA "  # the original spelling is kept for display
    assert normalize_relation("lives   in") == normalize_relation("LIVES-IN") == "lives_in"
    assert normalize_subject("Straße") == normalize_subject("STRASSE")


def test_objects_compare_normalised_and_keep_their_type() -> None:
    assert normalize_object(" Berlin ") == normalize_object("berlin")
    assert normalize_object(1) == normalize_object(1.0) != normalize_object("1")
    assert normalize_object(True) != normalize_object(1)
    for value in ("Berlin", 3, 2.5, False):
        assert decode_object(encode_object(value)) == value
        assert type(decode_object(encode_object(value))) is type(value)


@given(st.text())
def test_text_normalisation_is_idempotent(text: str) -> None:
    assert normalize_text(normalize_text(text)) == normalize_text(text)


def test_prose_has_no_key_and_no_object() -> None:
    prose = Fact(text="We moved the standup to 10am")
    assert prose.key is None
    assert prose.object_key is None
    assert prose.status is FactStatus.UNRECORDED


@pytest.mark.parametrize(
    ("fields", "field", "fix"),
    [
        ({"text": "  "}, "text", "non-empty"),
        ({"text": 5}, "text", "str"),
        ({"text": "x" * 1_000_001}, "text", "under"),
        ({"id": ""}, "id", "non-empty"),
        ({"namespace": " "}, "namespace", "non-empty"),
        ({"subject": "Maria", "object": "x"}, "relation", "both"),
        ({"relation": "r", "object": "x"}, "subject", "both"),
        ({"subject": "\u3000", "relation": "r", "object": "x"}, "subject", "non-empty"),
        ({"subject": "s", "relation": "--", "object": "x"}, "relation", "words"),
        ({"subject": "s", "relation": "r"}, "object", "retract"),
        ({"object": "Berlin"}, "object", "subject and relation"),
        ({"subject": "s", "relation": "r", "object": None}, "object", "retract"),
        ({"subject": "s", "relation": "r", "object": {"a": 1}}, "object", "str, int"),
        ({"subject": "s", "relation": "r", "object": float("inf")}, "object", "NaN"),
        ({"subject": "s", "relation": "r", "object": " "}, "object", "non-empty"),
        ({"valid_from": datetime(2024, 1, 1)}, "valid_from", "timezone-aware"),  # noqa: DTZ001
        ({"valid_from": "2024-01-01"}, "valid_from", "timezone-aware"),
        ({"recorded_at": datetime(2024, 1, 1)}, "recorded_at", "timezone-aware"),  # noqa: DTZ001
        ({"valid_from": WHEN, "valid_to": WHEN}, "valid_to", "later"),
        ({"metadata": ["a"]}, "metadata", "dict"),
        ({"metadata": {1: "a"}}, "metadata", "string keys"),
        ({"metadata": {"a": {"b": float("nan")}}}, "metadata.a.b", "finite"),
        ({"metadata": {"a": [object()]}}, "metadata.a[0]", "JSON"),
        ({"text": "bad \udcff byte"}, "text", "decode"),
    ],
)
def test_bad_input_names_the_field_and_the_fix(
    fields: dict[str, object], field: str, fix: str
) -> None:
    values: dict[str, object] = {"text": "a statement", **fields}
    with pytest.raises(InvalidInputError) as caught:
        Fact(**values)  # type: ignore[arg-type]
    assert caught.value.field == field
    assert fix in caught.value.fix or fix in caught.value.problem
    assert isinstance(caught.value, ValueError)


def test_facts_are_immutable_including_their_metadata() -> None:
    source = {"tags": ["a"], "nested": {"k": 1}}
    fact = Fact(text="x", metadata=source)
    source["tags"].append("b")  # the caller's dict is copied, not kept
    assert fact.metadata["tags"] == ("a",)
    with pytest.raises(AttributeError):
        fact.text = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        fact.metadata["tags"] = ()  # type: ignore[index]
    assert copy.deepcopy(fact) is fact


def test_facts_pickle_and_compare_by_value() -> None:
    fact = Fact(
        text="x",
        subject="s",
        relation="r",
        object=2,
        metadata={"a": [1, {"b": None}]},
        valid_from=WHEN,
    )
    again = pickle.loads(pickle.dumps(fact))
    assert again == fact
    assert hash(again) == hash(fact)
    assert again.metadata["a"][1]["b"] is None


def test_to_dict_is_json_ready() -> None:
    end = Reason(ReasonKind.SUPERSEDED, "f2", "supersession")
    fact = Fact.trusted(
        id="f1",
        text="Maria lives in Berlin",
        subject="Maria",
        relation="lives in",
        object="Berlin",
        valid_from=WHEN,
        valid_to=WHEN + timedelta(days=1),
        namespace="default",
        metadata=Fact(text="x", metadata={"source": "chat"}).metadata,
        recorded_at=WHEN,
        end_reason=end,
    )
    data = json.loads(json.dumps(fact.to_dict()))
    assert data["status"] == "superseded"
    assert data["superseded_by"] == "f2"
    assert data["end_reason"] == {
        "kind": "superseded",
        "by": "f2",
        "rule": "supersession",
        "score": None,
    }
    assert data["valid_from"] == "2024-05-01T00:00:00+00:00"
    assert data["metadata"] == {"source": "chat"}
    assert fact.superseded_by == "f2"


def test_aware_datetimes_in_any_zone_are_accepted() -> None:
    tokyo = timezone(timedelta(hours=9))
    fact = Fact(text="x", valid_from=datetime(2024, 5, 1, 9, tzinfo=tokyo))
    assert fact.valid_from == WHEN


def test_key_relation_validates_and_normalises() -> None:
    assert key_relation(" Works-For ") == "works_for"
    with pytest.raises(InvalidInputError, match="relation"):
        key_relation("")


def test_default_fact_ids_are_uuid7_and_sort_by_creation_time() -> None:
    earlier = [new_fact_id() for _ in range(2_000)]
    time.sleep(0.002)  # the next millisecond
    later = Fact(text="made later").id
    assert len(set(earlier)) == len(earlier)
    for fact_id in [*earlier, later]:
        parsed = uuid.UUID(hex=fact_id)
        assert (len(fact_id), parsed.version, parsed.variant) == (32, 7, uuid.RFC_4122)
        assert parsed.hex == fact_id
    assert max(earlier) < later
    made_at = int(later[:12], 16) / 1_000
    assert abs(made_at - time.time()) < 60

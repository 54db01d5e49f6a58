"""The simulator's free text: distinct within an answer, as long as the field's description asks."""

import random

from llmsim.schema import _VOCABULARY, fill_schema
from state.memrec.schemas import FacetSet


def test_facets_are_distinct_short_phrases_and_other_text_full_sentences() -> None:
    schema = FacetSet.model_json_schema()
    schema["properties"]["facets"]["minItems"] = 7
    for seed in range(20):
        answer = FacetSet.model_validate(fill_schema(schema, [], random.Random(seed)))
        phrases = [f.facet for f in answer.facets]
        assert len(phrases) == 7 and len(set(phrases)) == 7
        for phrase in phrases:  # "A short phrase naming one preference": 2-6 words, no full stop
            words = phrase.lower().split()
            assert 2 <= len(words) <= 6 and not phrase.endswith(".")
            assert set(words) <= set(_VOCABULARY.split())
    reason = fill_schema({"type": "string", "description": "One short sentence."}, [], random.Random(0))
    assert reason.endswith(".") and 6 <= len(reason.split()) <= 18


def test_repeated_text_fields_of_one_answer_never_coincide() -> None:
    schema = {"type": "array", "minItems": 400, "items": {"type": "string", "description": "a phrase"}}
    values = fill_schema(schema, [], random.Random(3))
    assert len(values) == 400 and len(set(values)) == 400

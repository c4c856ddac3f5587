"""The forecast call's answer schema: bounded by the grammar, read the same way everywhere."""

import json

from llama_cpp.llama_grammar import json_schema_to_gbnf

from graph.thinking import grammar_safe
from nodes.cycle.steps import ExploreForecasts, Forecasts, forecast_schema


def test_the_grammar_names_only_the_actions_asked_about() -> None:
    schema = forecast_schema(["recall", "gaps", "recall"], explore=False).model_json_schema()
    item = schema["$defs"]["Forecast"]["properties"]
    assert item["name"] == {"type": "string", "enum": ["recall", "gaps"]}
    assert schema["properties"]["outcomes"]["minItems"] == 1
    assert schema["properties"]["outcomes"]["maxItems"] == 2
    grammar = json_schema_to_gbnf(json.dumps(grammar_safe(schema)))
    assert 'Forecast-name ::= "\\"recall\\"" | "\\"gaps\\""' in grammar


def test_an_explore_answer_starts_with_its_question_and_search_words() -> None:
    schema = forecast_schema(["beliefs"], explore=True).model_json_schema()
    assert list(schema["properties"]) == ["question", "query", "outcomes"]
    assert schema["required"] == ["question", "query", "outcomes"]
    grammar = json_schema_to_gbnf(json.dumps(grammar_safe(schema)))
    root = next(line for line in grammar.splitlines() if line.startswith("root ::="))
    assert root.index("question-kv") < root.index("query-kv") < root.index("outcomes-kv")


def test_answers_validate_as_the_static_models_and_percentages_are_read() -> None:
    answer = forecast_schema(["recall"], explore=True).model_validate(
        {
            "question": "What matters?",
            "query": "matters",
            "outcomes": [{"name": "recall", "success": 50}],
        }
    )
    assert isinstance(answer, ExploreForecasts)
    assert answer.outcomes[0].success == 0.5
    plain = forecast_schema(["recall"], explore=False).model_validate(
        {"outcomes": [{"name": "recall", "success": 1}, {"name": "recall", "success": 0.25}]}
    )
    assert isinstance(plain, Forecasts)
    assert [o.success for o in plain.outcomes] == [1.0, 0.25]

"""Conversation samples (Ragas' MultiTurnSample): read from every format, checked row by row and field by field,
and written back to a run folder in the same shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.data.errors import DataError, Problem
from localeval.data.load import load_samples, samples_from_records
from localeval.data.messages import ToolCall, tool_calls_made, transcript
from localeval.data.stream import sample_chunks
from localeval.store.run_folder import sample_record

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Written by Ragas 0.4.3's own EvaluationDataset (tests/fixtures/make_ragas_conversations.py).
RAGAS_WRITTEN = ["ragas_conversations.jsonl", "ragas_conversations.csv", "ragas_conversations.parquet",
                 "ragas_conversations_hf"]
HUMAN = {"type": "human", "content": "Book a table for two."}
CALL = {"name": "book_table", "args": {"people": 2}}
AI_CALLS = {"type": "ai", "content": "", "tool_calls": [CALL]}
TOOL = {"type": "tool", "content": "Booked."}


def _problem(rows: list[dict], tmp_path: Path, needs: dict | None = None) -> Problem:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_samples(path, required=needs)
    assert len(info.value.problems) == 1, info.value.problems
    return info.value.problems[0]


@pytest.mark.parametrize("name", RAGAS_WRITTEN)
def test_a_data_set_ragas_wrote_loads_unchanged(name: str) -> None:
    samples = load_samples(FIXTURES / name)
    assert samples == load_samples(FIXTURES / "ragas_conversations.jsonl")  # every format, the same samples
    second = samples[1]
    assert [m.type for m in second.conversation or ()] == ["human", "ai", "tool", "ai", "tool", "ai", "human", "ai"]
    assert [c.name for c in tool_calls_made(second.conversation or ())] == ["restaurant_search", "book_table"]
    assert second.reference_tool_calls == (ToolCall("restaurant_search", {"cuisine": "French", "city": "Lyon"}),
                                           ToolCall("book_table", {"restaurant": "Chez Paul", "people": 4,
                                                                   "time": "19:30"}))
    assert second.reference_topics == ("restaurants", "weather") and second.user_input is None
    assert second.reference == "A table for four at a French restaurant in Lyon is booked for 19:30."


def test_the_agent_example_is_the_data_set_ragas_wrote() -> None:
    example = FIXTURES.parents[1] / "examples" / "agent_demo.jsonl"
    assert load_samples(example) == load_samples(FIXTURES / "ragas_conversations.jsonl")


def test_a_json_list_of_ragas_records_loads_too(tmp_path: Path) -> None:
    lines = (FIXTURES / "ragas_conversations.jsonl").read_text(encoding="utf-8").splitlines()
    (tmp_path / "d.json").write_text(json.dumps([json.loads(line) for line in lines]), encoding="utf-8")
    assert load_samples(tmp_path / "d.json") == load_samples(FIXTURES / "ragas_conversations.jsonl")


@pytest.mark.parametrize("name", ["ragas_conversations.jsonl", "ragas_conversations.parquet",
                                  "ragas_conversations_hf"])
def test_a_large_file_read_in_chunks_gives_the_same_samples(name: str) -> None:
    chunks = [samples for _, samples in sample_chunks(FIXTURES / name, 2)]
    assert [len(c) for c in chunks] == [2, 1]
    assert [s for c in chunks for s in c] == load_samples(FIXTURES / "ragas_conversations.jsonl")


def test_the_judge_reads_the_conversation_turn_by_turn_with_its_tool_calls() -> None:
    first = load_samples(FIXTURES / "ragas_conversations.jsonl")[0]
    assert transcript(first.conversation or ()).splitlines() == [
        "Human: What will the weather be like in Lyon tomorrow?",
        "AI: Let me look that up.",
        "Tools:",
        "  weather_lookup: {'city': 'Lyon', 'unit': 'celsius'}",
        "ToolOutput: Lyon tomorrow: 21 degrees, light rain in the afternoon.",
        "AI: Tomorrow Lyon will reach 21 degrees, with light rain in the afternoon.",
    ]


def test_the_run_folder_keeps_a_conversation_in_ragas_shape_and_reads_it_back() -> None:
    samples = load_samples(FIXTURES / "ragas_conversations.jsonl")
    records = [sample_record(s) for s in samples]
    written = [json.loads(line) for line in (FIXTURES / "ragas_conversations.jsonl").read_text().splitlines()]
    assert [{k: v for k, v in r.items() if k != "id"} for r in records] == written
    assert samples_from_records(json.loads(json.dumps(records))) == samples


def test_a_tool_message_with_no_call_before_it_is_a_row_and_field_error(tmp_path: Path) -> None:
    rows = [{"user_input": [HUMAN, AI_CALLS, TOOL]}, {"user_input": [HUMAN, TOOL]}]
    problem = _problem(rows, tmp_path)
    assert (problem.row, problem.field, problem.column) == (2, "user_input", "user_input")
    assert "message 2 is a tool's output with no AI tool call before it" in problem.message
    assert "message 1 is a human message" in problem.message
    after_text = _problem([{"user_input": [HUMAN, {"type": "ai", "content": "Sure."}, TOOL]}], tmp_path)
    assert "message 3" in after_text.message and "an AI message without tool calls" in after_text.message


def test_arguments_that_are_not_an_object_are_a_row_and_field_error(tmp_path: Path) -> None:
    made = {"type": "ai", "content": "", "tool_calls": [{"name": "book_table", "args": '{"people": 2}'}]}
    problem = _problem([{"user_input": [HUMAN, AI_CALLS]}, {"user_input": [HUMAN, made]}], tmp_path)
    assert (problem.row, problem.field) == (2, "user_input")
    assert "message 2: tool call 1 (book_table): arguments ('args') must be an object" in problem.message
    assert "decode the JSON text" in problem.message
    reference = _problem([{"user_input": [HUMAN], "reference_tool_calls": [{"name": "w", "args": [1, 2]}]}],
                         tmp_path)
    assert (reference.row, reference.field) == (1, "reference_tool_calls")
    assert "tool call 1 (w): arguments ('args') must be an object" in reference.message


@pytest.mark.parametrize(("turn", "words"), [
    ({"type": "human", "content": "  "}, "message 2 (human): a turn with no text"),
    ({"type": "tool"}, "message 2 (tool): no text ('content' is missing)"),
    ({"type": "ai", "content": ""}, "message 2 (ai): a turn with no text and no tool calls"),
])
def test_a_turn_with_no_text_is_a_row_and_field_error(tmp_path: Path, turn: dict, words: str) -> None:
    first = AI_CALLS if turn["type"] == "tool" else HUMAN
    problem = _problem([{"user_input": [HUMAN, AI_CALLS, TOOL]}, {"user_input": [first, turn]}], tmp_path)
    assert (problem.row, problem.field) == (2, "user_input") and words in problem.message, problem.message


def test_an_ai_turn_that_only_calls_tools_may_have_empty_text() -> None:
    (sample,) = samples_from_records([{"user_input": [HUMAN, AI_CALLS, TOOL]}])
    assert sample.conversation is not None and sample.conversation[1].content == ""


def test_other_conversation_problems_name_the_message(tmp_path: Path) -> None:
    kind = _problem([{"user_input": [HUMAN, {"type": "robot", "content": "x"}]}], tmp_path)
    assert "message 2: 'type' must be one of human, ai, tool, got str 'robot'" in kind.message
    human_calls = _problem([{"user_input": [{**HUMAN, "tool_calls": [CALL]}]}], tmp_path)
    assert "message 1 (human): only an AI message makes tool calls" in human_calls.message
    nameless = _problem([{"user_input": [HUMAN, {"type": "ai", "content": "", "tool_calls": [{"args": {}}]}]}],
                        tmp_path)
    assert "tool call 1: 'name' must be the tool's name" in nameless.message


def test_metrics_that_read_text_or_a_conversation_say_which_the_row_holds(tmp_path: Path) -> None:
    rows = [{"user_input": "What is the time?", "reference_tool_calls": []}]
    wants_conversation = _problem(rows, tmp_path, {"tool_call_f1": ("conversation", "reference_tool_calls")})
    assert (wants_conversation.field, wants_conversation.column) == ("conversation", "user_input")
    assert "user_input holds text, but tool_call_f1 read a conversation" in wants_conversation.message
    wants_text = _problem([{"user_input": [HUMAN]}], tmp_path, {"faithfulness": ("user_input",)})
    assert "a conversation, but faithfulness read the question as text" in wants_text.message
    absent = _problem([{"response": "r"}], tmp_path, {"tool_call_f1": ("conversation",)})
    assert "add a column 'user_input' holding a list of messages" in absent.message


def test_a_list_of_plain_texts_in_user_input_is_not_taken_for_a_conversation(tmp_path: Path) -> None:
    problem = _problem([{"user_input": ["a", "b"]}], tmp_path)
    assert "expected text, got list" in problem.message and "a conversation is a list of messages" in problem.message


def test_rubric_keys_name_their_score_level(tmp_path: Path) -> None:
    (sample,) = samples_from_records([{"response": "r", "rubrics": {"score1_description": "bad",
                                                                     "score2_description": "good"}}])
    assert sample.rubrics == {"score1_description": "bad", "score2_description": "good"}
    problem = _problem([{"response": "r", "rubrics": {"bad": "x", "score2_description": "y"}}], tmp_path)
    assert (problem.field, problem.column) == ("rubrics", "rubrics") and "'bad': each key names" in problem.message
    twice = _problem([{"response": "r", "rubrics": {"score1": "x", "level 1": "y"}}], tmp_path)
    assert "two keys name the same score level" in twice.message


def test_columnar_formats_fill_absent_arguments_with_null_and_those_are_left_out(tmp_path: Path) -> None:
    import pandas as pd

    rows = [{"user_input": [HUMAN, AI_CALLS, TOOL], "reference_tool_calls": [{"name": "a", "args": {"x": 1}}]},
            {"user_input": [HUMAN], "reference_tool_calls": [{"name": "b", "args": {"y": "two"}}]}]
    pd.DataFrame(rows).to_parquet(tmp_path / "d.parquet")  # Arrow gives both calls both arguments
    first, second = load_samples(tmp_path / "d.parquet")
    assert first.reference_tool_calls == (ToolCall("a", {"x": 1}),)
    assert second.reference_tool_calls == (ToolCall("b", {"y": "two"}),)
    (kept,) = samples_from_records([{"user_input": [HUMAN], "reference_tool_calls": [{"name": "c", "args": {
        "z": None}}]}])
    assert kept.reference_tool_calls == (ToolCall("c", {"z": None}),)  # JSON's null is the user's value


OPENAI = [
    {"role": "system", "content": "You book tables."},
    {"role": "user", "content": "Book a table for two."},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "book_table", "arguments": "{\"people\": 2}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Booked."},
    {"role": "assistant", "content": [{"type": "text", "text": "Your table is booked."}]},
]


def test_openai_shaped_messages_load_as_the_ragas_messages_they_are() -> None:
    (openai,) = samples_from_records([{"id": "c1", "user_input": OPENAI}])
    ragas = [HUMAN, AI_CALLS, TOOL, {"type": "ai", "content": "Your table is booked."}]
    (same,) = samples_from_records([{"id": "c1", "user_input": ragas}])
    assert openai == same  # the system message is left out: Ragas' conversations have none
    assert openai.conversation is not None and [m.type for m in openai.conversation] == ["human", "ai", "tool", "ai"]
    assert tool_calls_made(openai.conversation) == [ToolCall("book_table", {"people": 2})]


def test_a_tool_call_in_openai_s_shape_inside_a_ragas_message_loads() -> None:
    call = {"id": "c", "type": "function", "function": {"name": "book_table", "arguments": "{\"people\": 2}"}}
    (sample,) = samples_from_records([{"user_input": [HUMAN, {"type": "ai", "content": "", "tool_calls": [call]},
                                                      TOOL]}])
    assert sample.conversation is not None and sample.conversation[1].tool_calls == (ToolCall("book_table",
                                                                                              {"people": 2}),)


def test_an_openai_role_written_as_type_gets_a_did_you_mean(tmp_path: Path) -> None:
    problem = _problem([{"id": "conv-a", "user_input": [{"type": "user", "content": "Hi."}]}], tmp_path)
    assert "message 1: 'type' must be one of human, ai, tool, got str 'user'; did you mean 'type': 'human'?" in (
        problem.message)
    assert "OpenAI's shape, {\"role\": \"user\", \"content\": ...}" in problem.message
    assistant = _problem([{"user_input": [HUMAN, {"type": "assistant", "content": "Hi."}]}], tmp_path)
    assert "did you mean 'type': 'ai'?" in assistant.message


@pytest.mark.parametrize(("message", "words"), [
    ({"role": "robot", "content": "x"}, "message 2: 'role' must be one of user, assistant, tool, function, system, "
                                         "developer (OpenAI's shape), or write the message in Ragas' shape"),
    ({"role": "assistant", "content": None, "tool_calls": [
        {"type": "function", "function": {"name": "book_table", "arguments": "{people: 2}"}}]},
     "message 2: tool call 1 (book_table): 'arguments' is not valid JSON"),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
     "message 2 (user): content part 1 is str 'image_url'; only text parts"),
    ({"role": "user"}, "message 2 (user): no text ('content' is missing)"),
    ({"content": "x"}, "message 2: 'type' must be one of human, ai, tool (or OpenAI's 'role': user, assistant, "
                       "tool), got NoneType None"),
])
def test_openai_shaped_problems_name_the_message(tmp_path: Path, message: dict, words: str) -> None:
    problem = _problem([{"user_input": [HUMAN, message]}], tmp_path)
    assert (problem.row, problem.field) == (1, "user_input") and words in problem.message, problem.message


def test_a_conversation_problem_names_the_record_s_own_id_beside_its_row(tmp_path: Path) -> None:
    rows = [{"id": "conv-a", "user_input": [HUMAN]}, {"id": "conv-b", "user_input": [HUMAN, TOOL]}]
    problem = _problem(rows, tmp_path)
    assert (problem.row, problem.record_id) == (2, "conv-b")
    assert str(problem).startswith("row 2 (id 'conv-b'), column 'user_input': message 2 is a tool's output")

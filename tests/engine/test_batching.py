"""The transformers engine's batches, model-free: token budget, row limit, shared prefixes, stable order."""

from __future__ import annotations

from localeval.engine.transformers.batching import (
    MIN_SHARED_PREFIX,
    SlotTable,
    common_prefix,
    plan_batches,
    split_rows,
)

LENGTHS = [100, 90, 40, 30, 20, 10]
BUDGETS = [50, 50, 10, 10, 10, 10]


def test_token_budget_splits_batches_by_rows_times_longest_row() -> None:
    rows = list(range(len(LENGTHS)))
    # 2 x (100 + 50) = 300 fits; a third row would make 3 x 150; then 4 x (40 + 10) = 200 and so on.
    assert split_rows(LENGTHS, BUDGETS, rows, 0, 16, 300) == [[0, 1], [2, 3, 4, 5]]
    assert split_rows(LENGTHS, BUDGETS, rows, 0, 3, 300) == [[0, 1], [2, 3, 4], [5]]
    assert [len(b) for b in split_rows(LENGTHS, BUDGETS, rows, 0, 3, None)] == [3, 3]


def test_rows_go_longest_first_and_a_shared_prefix_is_not_counted() -> None:
    assert split_rows([5, 50, 20], [10, 10, 10], [0, 1, 2], 0, 16, None) == [[1, 2, 0]]
    # without the 40 shared tokens, 3 x (60 - 40 + 10) = 90 fits a budget of 100; counted in full it would not
    assert split_rows([60, 60, 60], [10, 10, 10], [0, 1, 2], 40, 16, 100) == [[0, 1, 2]]
    assert split_rows([60, 60, 60], [10, 10, 10], [0, 1, 2], 0, 16, 100) == [[0], [1], [2]]
    assert split_rows([7, 7, 7], [1, 1, 1], [2, 0], 0, 16, None) == [[2, 0]]  # equal lengths keep their order


def test_the_common_prefix_leaves_every_row_a_token_of_its_own() -> None:
    assert common_prefix([[1, 2, 3], [1, 2, 4]]) == 2
    assert common_prefix([[1, 2], [1, 2, 3]]) == 1
    assert common_prefix([[5, 6], [7, 8]]) == 0


def test_asks_of_one_prompt_are_batched_around_their_shared_prefix() -> None:
    instruction = list(range(1000, 1000 + MIN_SHARED_PREFIX + 8))
    ids = [[*instruction, 1, 2], [7] * 50, [*instruction, 3], [*instruction, 4, 5, 6]]
    budgets = [10, 10, 10, 10]
    plan = plan_batches(ids, budgets, 16, None, prefix_reuse=True)
    assert plan == [([3, 0, 2], len(instruction)), ([1], 0)]
    assert plan_batches(ids, budgets, 16, None, prefix_reuse=False) == [([1, 3, 0, 2], 0)]


def test_a_short_shared_prefix_or_a_lone_ask_is_batched_by_length() -> None:
    prompt = list(range(MIN_SHARED_PREFIX))  # one row is only the prefix: the rows can share one token less
    ids = [prompt, [*prompt, 1, 2], [9] * 40]
    assert common_prefix(ids[:2]) == MIN_SHARED_PREFIX - 1
    assert plan_batches(ids, [5, 5, 5], 2, None, prefix_reuse=True) == [([2, 1], 0), ([0], 0)]
    assert plan_batches([[3] * 40], [5], 16, None, prefix_reuse=True) == [([0], 0)]
    assert plan_batches([], [], 16, None, prefix_reuse=True) == []


def _simulate(answers: list[int], batch_size: int) -> tuple[list[int], list[int], list[list[int | None]]]:
    """Run a queue through a SlotTable as the decode loop does: (busy rows per step, admission order, slots)."""
    table = SlotTable(batch_size)
    queue = list(range(len(answers)))
    left = list(answers)
    busy: list[int] = []
    admitted: list[int] = []
    layouts: list[list[int | None]] = []
    while True:
        while queue and table.fits():
            admitted.append(queue[0])
            table.place(queue[0])
            queue.pop(0)
        if not table.rows:
            return busy, admitted, layouts
        if not queue:
            table.pack()
        layouts.append(list(table.slots))
        busy.append(len(table.rows))
        for slot, row in enumerate(table.slots):
            if row is None:
                continue
            left[row] -= 1
            if left[row] == 0:
                table.free(slot)


def test_steps_run_full_until_the_queue_is_empty() -> None:
    answers = [5, 1, 3, 2, 8, 1, 1, 4, 2, 6]
    busy, admitted, layouts = _simulate(answers, 4)
    assert admitted == list(range(len(answers)))  # the queue's order
    assert sum(busy) == sum(answers)  # every answer token is one busy row of one step
    last_admission = min(i for i, layout in enumerate(layouts) if 9 in layout)
    assert all(b == 4 for b in busy[: last_admission + 1])  # full while rows still wait
    assert busy[last_admission:] == sorted(busy[last_admission:], reverse=True)  # then it drains
    # a fixed batch of 4 would run 8 + 4 + 6 = 18 steps for these answers; continuous batching needs fewer
    assert len(busy) < 18


def test_a_finished_row_s_slot_goes_to_the_next_waiting_row() -> None:
    _, _, layouts = _simulate([1, 3, 1], 2)
    assert layouts == [[0, 1], [2, 1], [1]]  # row 2 takes slot 0; then the batch shrinks to row 1


def test_rows_are_the_only_limit_on_slots() -> None:
    table = SlotTable(2)
    assert table.fits()
    table.place(0)
    table.place(1)
    assert not table.fits()  # two rows in two slots
    table.free(0)
    assert table.fits() and table.slots == [None, 1] and table.rows == [1]
    assert table.pack() == [(1, 0)] and table.slots == [1] and table.pack() == []
    assert table.place(2) == 1 and table.rows == [1, 2]

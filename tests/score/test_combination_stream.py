"""The combination of the score's parts (:mod:`madcluster.score.combination`) without a network:
the own score given, each part streamed row by row and in chunks against the whole series (when a
step's score is final, its value, the provisional one, the state a stream keeps), and the rules and
the description against their definitions. Found by the mutation run of ``docs/mutation.md``."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pytest
from series_helpers import periodic_pair

from madcluster.score.combination import RULES, Combination
from madcluster.score.combination_stream import CombinationStream
from madcluster.score.parts import FitContext

EXACT = 1e-9
WINDOW = 16


def _close(got: np.ndarray, want: np.ndarray) -> None:
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= EXACT * max(
        1.0, np.abs(want).max(initial=0.0)
    )


@pytest.fixture(scope="module")
def train() -> tuple[np.ndarray, np.ndarray]:
    rows = periodic_pair(600, 0)
    own = np.random.default_rng(5).normal(size=len(rows))
    return rows, own


@pytest.fixture(scope="module")
def test_rows() -> tuple[np.ndarray, np.ndarray]:
    rows = periodic_pair(140, 1)
    rows[70:90, 0] = rows[70:90, 0][::-1].copy()  # a reversed stretch: a discord
    own = np.random.default_rng(6).normal(size=len(rows))
    own[100:104] += 4.0
    return rows, own


def _fit(train, names, smoothing=None, rule="positive-zscore-sum", weights=None) -> Combination:
    rows, own = train
    return Combination.fit(names, rows, own, FitContext(WINDOW, 0), weights, smoothing, rule=rule)


def _stream_row_by_row_then_in_chunks(combination, rows, own):
    """Every update's results, checked against the whole series as they come."""
    whole = combination.score(rows, own)
    at_once = combination.at_once_score(rows, own)
    delay = combination.final_after()
    stream = CombinationStream(combination)
    bounds = [*range(4 * WINDOW), *range(4 * WINDOW, len(rows), 7), len(rows)]
    finals = []
    for lo, hi in itertools.pairwise(bounds):
        update = stream.update(own[lo:hi], rows[lo:hi])
        # a step's score is final final_after() rows after it (once the series is longer than
        # the parts' blocks), never before
        assert update.final_from == sum(len(f) for f in finals)
        final_to = update.final_from + len(update.final_scores)
        assert final_to <= max(0, hi - delay)
        if hi >= max(3 * WINDOW, 2 * delay + 1):  # the parts' first blocks are complete
            assert final_to == hi - delay
        _close(update.final_scores, whole[update.final_from : final_to])
        finals.append(update.final_scores)
        # the provisional scores: every part read from steps <= t
        _close(update.scores, at_once[lo:hi])
        # the pending scores: the whole series' of the rows so far
        if hi >= WINDOW and hi % 6 == 0:
            so_far = combination.score(rows[:hi], own[:hi])
            _close(stream.pending_scores(), so_far[stream.pending_from :])
    return stream, np.concatenate(finals)


@pytest.mark.parametrize(
    ("names", "smoothing"),
    [(("discord",), None), (("kmeans", "ar"), None), (("ar",), {"own": 4, "ar": 5})],
)
def test_a_stream_gives_the_whole_series_scores_when_final_and_not_before(
    train, test_rows, names, smoothing
):
    combination = _fit(train, names, smoothing)
    rows, own = test_rows
    stream, finals = _stream_row_by_row_then_in_chunks(combination, rows, own)
    whole = combination.score(rows, own)
    _close(np.concatenate([finals, stream.pending_scores()]), whole)


def test_a_new_fit_reads_a_smoothed_part_at_once_at_its_step_alone(train, test_rows):
    """At once a smoothed point-wise part reads its value at t alone, standardised with its raw
    training values' statistics: a rise of the own score shows at once at its full height (the
    centred block cut at t, the reading before, showed a third of it on the rise's first row
    with a block of 6), and the stream answers what the whole series' at-once reading gives."""
    from madcluster.score.combination import mean_std

    combination = _fit(train, ("ar",), {"own": 6, "ar": 4})
    assert combination.at_once_widths == {"own": 1, "ar": 1}
    rows, own = test_rows
    ar = combination.terms[0]
    assert combination.at_once_stats["own"] == mean_std(train[1])
    assert combination.at_once_stats["ar"] == mean_std(ar.reference_values(train[0]))
    mean, std = mean_std(train[1])
    readings = combination.at_once_readings(rows, own)
    assert np.array_equal(readings["own"], own) and np.array_equal(readings["ar"], ar.values(rows))
    terms = [combination.contribution(p, readings[p.name], at_once=True) for p in combination.parts]
    assert terms[0][100] == max((own[100] - mean) / std, 0.0) > 3.0  # the rise's first row
    _close(combination.at_once_score(rows, own), terms[0] + terms[1])
    _stream_row_by_row_then_in_chunks(combination, rows, own)


def test_a_file_from_before_reads_a_smoothed_part_at_once_through_its_cut_block(train, test_rows):
    """A combination whose record names no at-once widths (a model file from before them) reads
    a smoothed part at once through its centred block cut at t, as it was fitted to, and streams
    it; a record names the widths only where it has them."""
    from dataclasses import replace

    from madcluster.score.schema import combination_arrays, combination_from, combination_record
    from madcluster.score.smoothing import trailing_means

    fitted = _fit(train, ("ar",), {"own": 6, "ar": 4})
    record = combination_record(fitted)
    assert record["at_once_widths"] == {"own": 1, "ar": 1}
    arrays = combination_arrays(fitted)
    assert combination_from(record, arrays).at_once_widths == {"own": 1, "ar": 1}
    record.pop("at_once_widths")
    before = replace(fitted, at_once_widths={})
    assert combination_from(record, arrays).at_once_widths == {}
    assert "at_once_widths" not in combination_record(before)
    rows, own = test_rows
    _close(before.at_once_readings(rows, own)["own"], trailing_means(own, 3))  # 6: 3 at once
    _stream_row_by_row_then_in_chunks(before, rows, own)


def test_at_once_weights_set_by_the_fit_replace_the_weight_times_its_share(train, test_rows):
    """A part read ahead weighs its recorded at-once weight in the at-once score (the final score
    its weight); where none is recorded (files from before, weights a user gave) its weight times
    its share in ``AT_ONCE_SHARES``. The record keeps the table; the stream answers the same."""
    from madcluster.score.combination import AT_ONCE_SHARES
    from madcluster.score.schema import combination_arrays, combination_from, combination_record

    rows, own = test_rows
    weights = {"discord": 2.5}
    fitted = Combination.fit(
        ("discord",), *train, FitContext(WINDOW, 0), weights, None,
        rule="positive-zscore-sum", at_once_weights={"discord": 2.0, "ar": 9.0},
    )  # fmt: skip
    assert fitted.at_once_weights == {"discord": 2.0}  # only parts read ahead
    before = replace(fitted, at_once_weights={})
    assert before.at_once_weight("discord") == 2.5 * AT_ONCE_SHARES["discord"]
    reading = fitted.at_once_readings(rows, own)["discord"]
    new = fitted.contribution(fitted.parts[1], reading, at_once=True)
    old = before.contribution(before.parts[1], reading, at_once=True)
    assert new.max() > 0 and np.allclose(new * 2.5 * AT_ONCE_SHARES["discord"], old * 2.0)
    # the final score does not change
    _close(fitted.score(rows, own), before.score(rows, own))
    record = combination_record(fitted)
    assert record["at_once_weights"] == {"discord": 2.0}
    assert combination_from(record, combination_arrays(fitted)).at_once_weights == {"discord": 2.0}
    record.pop("at_once_weights")
    assert combination_from(record, combination_arrays(fitted)).at_once_weights == {}
    assert "at_once_weights" not in combination_record(before)
    _stream_row_by_row_then_in_chunks(fitted, rows, own)


def test_a_discord_stream_keeps_only_what_a_pending_step_reads(train, test_rows):
    """Per join, its last m - 1 rows and the distances of the subsequences the first pending
    step reads (its value is final once 2M - 1 rows are in, M the longest join's length): a
    stream's state does not grow with the series."""
    combination = _fit(train, ("discord",))
    (part,) = combination.terms
    lengths = [join.length for join in part.joins]
    longest = part.length
    assert len(lengths) == 2 and longest == max(lengths)  # the period's join and the short one
    assert combination.final_after() == longest - 1
    rows, own = test_rows
    stream = CombinationStream(combination)
    for t in range(len(rows)):
        stream.update(own[t : t + 1], rows[t : t + 1])
        state = stream.state()
        total = t + 1
        pending = total - longest + 1 if total >= 2 * longest - 1 else 0
        assert stream.pending_from == pending
        for i, m in enumerate(lengths):
            assert len(state[f"terms/discord/{i}/rows"]) == min(total, m - 1)
            completed = max(0, total - m + 1)
            # the longest join keeps its last M; a shorter one the M - 1 the pending step reads
            kept = longest if m == longest else longest - 1
            want = completed if pending == 0 else min(completed, kept)
            assert len(state[f"terms/discord/{i}/distances"]) == want


def test_a_stream_goes_on_from_its_state(train, test_rows):
    combination = _fit(train, ("kmeans", "ar", "discord"), {"own": 3, "ar": 4})
    rows, own = test_rows
    whole = combination.score(rows, own)
    first = CombinationStream(combination)
    # past the 2 m - 1 rows after which the discord's first value is final (m: its longest join)
    first.update(own[:100], rows[:100])
    finals = [first.update(own[100:101], rows[100:101]).final_scores]
    again = CombinationStream(combination)
    again.load({k: np.array(v, copy=True) for k, v in first.state().items()})
    assert (again.steps_seen, again.pending_from) == (first.steps_seen, first.pending_from)
    update = again.update(own[101:], rows[101:])
    finals.append(update.final_scores)
    _close(
        np.concatenate([*finals, again.pending_scores()]), whole[100 - combination.final_after() :]
    )


@pytest.mark.parametrize("rule", sorted(RULES))
def test_each_rule_against_its_definition(train, test_rows, rule):
    weights = {"own": 0.5, "kmeans": 1.5, "ar": 2.0}
    combination = _fit(train, ("kmeans", "ar"), None, rule, weights)
    rows, own = test_rows
    raw = {"own": own, **{p.name: p.values(rows) for p in combination.terms}}
    z = {n: (raw[n] - combination.stats[n][0]) / combination.stats[n][1] for n in raw}
    names = ("own", "kmeans", "ar")
    table = np.stack([weights[n] * z[n] for n in names])
    tails = {n: combination.stats[n][2:3] or (0,) for n in names}  # the tail rules' third statistic
    excess = [weights[n] * (np.maximum(z[n] - tails[n][0], 0) + 0.05 * np.maximum(z[n], 0)) for n in names]
    direct = {
        "zscore-sum": table.sum(axis=0),
        "positive-zscore-sum": np.maximum(table, 0.0).sum(axis=0),
        # the training columns are continuous: the positive sum
        "few-valued-tail-excess": np.maximum(table, 0.0).sum(axis=0),
        "tail-excess-sum": np.sum(excess, axis=0),
        "zscore-max": table.max(axis=0),
    }[rule]
    _close(combination.score(rows, own), direct)
    # the training statistics: of each part's training reading (the tail: its z-scores' q .98)
    train_rows, train_own = train
    for p in combination.parts:
        values = p.bind(train_own).reference_values(train_rows)
        want = (values.mean(), values.std())
        if rule in ("tail-excess-sum", "few-valued-tail-excess"):
            q = 0.98 if rule == "tail-excess-sum" else 0.99
            tail = np.quantile((values - values.mean()) / values.std(), q)
            assert tail > 0
            want = (*want, tail, *((0.0,) if rule == "few-valued-tail-excess" else ()))
        assert combination.stats[p.name] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("few_valued", [0, 1, 3])
def test_the_few_valued_rule_mixes_the_tail_excess_by_the_share_of_few_valued_columns(
    train, test_rows, few_valued
):
    """``few-valued-tail-excess`` (the default): each part's term is f of its tail-excess term and
    1 - f of its positive one, f the share of training columns with few values (recorded as each
    part's fourth statistic); all continuous: exactly the positive sum's scores, at once and
    final."""
    rows, own = train
    test, test_own = test_rows
    extra = np.random.default_rng(1).integers(0, 2, size=(len(rows) + len(test), few_valued))
    rows = np.hstack([rows, extra[: len(rows)]]).astype(np.float32)
    test = np.hstack([test, extra[len(rows) :]]).astype(np.float32)
    share = few_valued / rows.shape[1]
    fits = {
        rule: Combination.fit(
            ("kmeans", "ar"), rows, own, FitContext(WINDOW, 0), {"ar": 2.0}, {"ar": 4}, rule=rule
        )
        for rule in ("few-valued-tail-excess", "positive-zscore-sum")
    }
    mixed = fits["few-valued-tail-excess"]
    # the tail excess at the mixed rule's quantile, .99
    fits["tail-excess-sum"] = replace(
        fits["positive-zscore-sum"],
        rule="tail-excess-sum",
        stats={n: s[:3] for n, s in mixed.stats.items()},
    )
    assert all(s[3] == pytest.approx(share) for s in mixed.stats.values())
    positive, beyond = (
        {p.name: c.contribution(p, v) for p, v in zip(c.final_parts, c.readings(test, test_own).values())}
        for c in (fits["positive-zscore-sum"], fits["tail-excess-sum"])
    )
    want = sum(share * beyond[n] + (1 - share) * positive[n] for n in positive)
    _close(mixed.score(test, test_own), want)
    if few_valued == 0:
        np.testing.assert_array_equal(
            mixed.score(test, test_own), fits["positive-zscore-sum"].score(test, test_own)
        )
        np.testing.assert_array_equal(
            mixed.at_once_score(test, test_own),
            fits["positive-zscore-sum"].at_once_score(test, test_own),
        )
        assert "each part at least 0" in mixed.describe() and "excess" not in mixed.describe()
    else:
        assert f"{share:.0%} of it (the share of few-valued columns)" in mixed.describe()


def test_the_tail_excess_rule_streams_its_own_scores(train, test_rows):
    """``part_rule="tail-excess-sum"``: below the positive sum's scores wherever a part sits inside
    its tail (most rows), at once and final; a stream gives the whole series' final scores."""
    combination = _fit(train, ("kmeans", "ar", "discord"), {"own": 6, "ar": 4}, "tail-excess-sum")
    positive = replace(combination, rule="positive-zscore-sum")
    rows, own = test_rows
    for score in ("score", "at_once_score"):
        mine, theirs = getattr(combination, score)(rows, own), getattr(positive, score)(rows, own)
        assert (mine < theirs - 1e-9).mean() > 0.5
    _stream_row_by_row_then_in_chunks(combination, rows, own)


def test_the_description_names_each_part_its_weight_smoothing_scale_and_the_rule(train):
    combination = _fit(
        train, ("kmeans", "ar", "discord"), {"own": 6, "ar": 4}, weights={"own": 0.5, "kmeans": 1.5}
    )
    discord = combination.terms[-1]
    parts = (
        "0.5 z(own, mean of 6) + 1.5 z(kmeans) + 1 z(ar, mean of 4)"
        f" + 1 z(discord, subsequences of {discord.lengths[0]} and subsequences of 48)"
    )
    assert combination.describe() == f"{parts}, each part at least 0"
    for rule, text in (
        ("zscore-sum", parts),
        ("zscore-max", f"zscore-max of {parts}"),
        ("tail-excess-sum", f"{parts}, each part's excess over its training q 0.98 (+ 0.05 of it above 0)"),
    ):
        other = Combination(
            combination.parts,
            combination.stats,
            combination.at_once_stats,
            combination.weights,
            combination.smoothing,
            rule,
        )
        assert other.describe() == text
    assert Combination.own_alone().describe() == "MADCluster's own score alone (no input terms)"


def test_a_part_missing_from_the_weights_weighs_1(train, test_rows):
    """Files from before the part weights name none: every part weighs 1 (in the score and in its
    description); a centred mean of 2 steps is a mean."""
    fitted = _fit(train, ("kmeans", "ar"), {"own": 2}, "zscore-sum")
    bare = Combination(
        fitted.parts, fitted.stats, fitted.at_once_stats, {}, {"own": 2}, "zscore-sum"
    )
    assert bare.describe() == "1 z(own, mean of 2) + 1 z(kmeans) + 1 z(ar)"
    rows, own = test_rows
    ones = Combination(
        fitted.parts,
        fitted.stats,
        fitted.at_once_stats,
        {"own": 1.0, "kmeans": 1.0, "ar": 1.0},
        {"own": 2},
        "zscore-sum",
    )
    assert np.array_equal(bare.score(rows, own), ones.score(rows, own))


def test_a_state_from_before_the_parts_kept_their_values_goes_on_as_it_would_have(
    train, test_rows
):
    """Stream states written when the combination kept the point-wise parts' values itself
    (under ``terms/reading/<name>/``) load into the parts' own kept streams and go on to the same
    scores (a served stream survives the upgrade)."""
    combination = _fit(train, ("kmeans", "ar"), {"own": 6, "ar": 4})
    rows, own = test_rows
    stream = CombinationStream(combination)
    stream.update(own[:150], rows[:150])
    state = stream.state()
    kept = [k for k in state if "/kept/" in k]
    assert {k.split("/")[1] for k in kept} == {"own", "ar"}  # one kept stream per point-wise part
    old = {
        (f"terms/reading/{k.split('/')[1]}/{k.rsplit('/', 1)[1]}" if k in kept else k): v
        for k, v in state.items()
    }
    again, before = CombinationStream(combination), CombinationStream(combination)
    again.load(old)
    before.load(state)
    for a, b in ((150, 151), (151, 190), (190, len(rows))):
        got, want = again.update(own[a:b], rows[a:b]), before.update(own[a:b], rows[a:b])
        assert np.array_equal(got.scores, want.scores)
        assert np.array_equal(got.final_scores, want.final_scores)

"""The exact discord part (:mod:`madcluster.score.discord`) against a direct loop over every
training subsequence, as a stream, through a file, and as a term of a fitted model (score,
stream, save, load, export)."""

from __future__ import annotations

import numpy as np
import pytest
from series_helpers import periodic_pair

from madcluster import MADCluster
from madcluster.estimator.streaming import StreamScorer
from madcluster.score import discord, discord_join
from madcluster.score.discord import STD_FLOOR, Discord, Join
from madcluster.score.legacy import DiscordWithoutAtOnce, discord_from_arrays, recast
from madcluster.score.parts import FitContext, part_class, parts_from_arrays, parts_to_arrays

TINY = {"window_size": 16, "epochs": 1, "epoch_windows": 64, "batch_size": 32, "random_state": 0}
EXACT = 1e-9


@pytest.fixture
def test_rows() -> np.ndarray:
    rows = periodic_pair(300, 1)
    rows[150:170, 0] = rows[150:170, 0][::-1].copy()  # a reversed stretch: same values, other shape
    return rows


def _close(got: np.ndarray, want: np.ndarray, tol: float = EXACT) -> None:
    assert got.shape == want.shape
    assert np.max(np.abs(got - want), initial=0.0) <= tol * max(1.0, np.abs(want).max(initial=0.0))


def _z(sub: np.ndarray) -> np.ndarray:
    centred = sub - sub.mean(axis=0)
    return (centred / np.maximum(centred.std(axis=0), STD_FLOOR)).T.ravel()


def _one(rows: np.ndarray, length: int, **kwargs) -> Join:
    """The single join of a discord part fitted on ``rows`` with subsequences of ``length``."""
    (join,) = Discord.fit(rows, FitContext(16), lengths=(length,), **kwargs).joins
    return join


def _direct(part: Join, read: np.ndarray, exclude_near: bool = False) -> np.ndarray:
    """Each subsequence's RMS distance to its nearest training subsequence, by a loop over them."""
    m, train = part.length, part.read(part.training)
    neighbours = [(i, _z(train[i : i + m])) for i in range(len(train) - m + 1)]
    out = []
    for s in range(len(read) - m + 1):
        q = _z(read[s : s + m])
        best = min(
            (
                float(np.mean((q - nb) ** 2))
                for i, nb in neighbours
                if not exclude_near or abs(part.training_first + i - s) >= m
            ),
            default=np.inf,
        )
        out.append(np.sqrt(best) if np.isfinite(best) else 0.0)
    return np.asarray(out)


def _block(t: int, n: int, m: int) -> int:
    """The first of the m subsequences step t of n reads."""
    return min(max(0, t - m + 1), max(0, n - 2 * m + 1))


def _per_step(each: np.ndarray, n: int, m: int) -> np.ndarray:
    return np.asarray([each[_block(t, n, m) : _block(t, n, m) + m].min() for t in range(n)])


def test_values_against_a_loop_over_every_training_subsequence(test_rows):
    train = periodic_pair(400, 0)
    train = np.concatenate([train, (np.arange(400) // 30 % 2)[:, None]], axis=1)  # few levels
    whole = Discord.fit(train.astype(np.float32), FitContext(16), lengths=(20,))
    (part,) = whole.joins
    assert part.columns.tolist() == [0, 1] and part.n_training == 400 - 20 + 1
    rows = np.concatenate([test_rows, np.zeros((300, 1), dtype=np.float32)], axis=1)
    n, m = len(rows), part.length
    each = _direct(part, part.read(rows))
    _close(part.distances(part.read(rows), np.arange(n - m + 1)), each)
    _close(part.values(rows), _per_step(each, n, m))
    _close(whole.values(rows), part.values(rows), 0.0)  # one join: its reading as it is
    # at once: the subsequence ending at t (none before the first); files before it: nothing
    at_once = whole.at_once(rows)
    assert np.isnan(at_once[: m - 1]).all()
    _close(at_once[m - 1 :], each)
    assert np.isfinite(whole.reference_at_once(train)).all()
    old = recast(whole, DiscordWithoutAtOnce)
    assert not old.at_once(rows).any() and not old.reference_at_once(rows).any()
    assert whole.final_after() == m - 1 and whole.reads_ahead


def test_the_training_reading_leaves_each_subsequence_own_neighbourhood_out():
    train = periodic_pair(300, 0)
    part = _one(train, 20)
    n, m = len(train), part.length
    direct = _per_step(_direct(part, part.read(train), exclude_near=True), n, m)
    _close(part.reference_values(train), direct)
    fitted = Discord.fit(train, FitContext(16), lengths=(20,))
    _close(fitted.reference_values(train), direct)  # kept from the fit
    _close(Discord.from_arrays(fitted.to_arrays()).reference_values(train), direct)
    assert np.allclose(part.values(train), 0.0, atol=1e-6)  # in-sample, each matches itself


def test_a_stretch_copied_from_anywhere_in_training_reads_zero():
    """Exact: every training subsequence is a neighbour, so a copy of any training stretch is
    at distance 0, which a sample of the training subsequences would not give on a random walk."""
    rng = np.random.default_rng(5)
    train = np.cumsum(rng.normal(size=(3000, 1)), axis=0).astype(np.float32)
    part = _one(train, 20)
    for start in (0, 1234, 2899, 2980):
        copy = train[start : start + 20]
        assert part.values(copy).max() < 1e-6
    fresh = np.cumsum(rng.normal(size=(200, 1)), axis=0).astype(np.float32)
    assert part.values(fresh).min() > 0.05


def test_blocks_and_their_sizes_change_nothing(monkeypatch, test_rows):
    part = Discord.fit(periodic_pair(900, 0), FitContext(16), lengths=(40, 16), segments=(2, 1))
    whole = part.values(test_rows)
    monkeypatch.setattr(discord_join, "_QUERY_BLOCK", 7)
    monkeypatch.setattr(discord_join, "_TRAINING_BLOCK", 100)
    monkeypatch.setattr(discord_join, "_KEPT_BYTES", 0)  # every block rebuilt when read
    small = Discord.from_arrays(part.to_arrays())
    assert all(j._kept_blocks is None for j in small.joins)
    _close(small.values(test_rows), whole, 1e-12)


@pytest.mark.parametrize("chunks", [(1,) * 300, (1, 4, 35, 1, 259), (300,)])
@pytest.mark.parametrize("shapes", [None, ((40, 16), (2, 1))])
def test_a_stream_gives_the_whole_series_values(test_rows, chunks, shapes):
    lengths, segments = shapes or (None, None)
    part = Discord.fit(periodic_pair(600, 0), FitContext(16), lengths, segments)
    whole = part.values(test_rows)
    stream, at, at_once = part.stream(), 0, []
    for size in chunks:
        at_once.append(stream.append(test_rows[at : at + size]))
        at += size
        final = stream.final_before(at)
        recent = np.arange(max(0, final - 3), final)
        _close(stream.values(recent), part.values(test_rows[:at])[recent])
        stream.forget_before(max(0, final - 3))
    kept = max(0, stream.final_before(300) - 3)
    _close(stream.values(np.arange(kept, 300)), whole[kept:])
    streamed, causal = np.concatenate(at_once), part.at_once(test_rows)  # the causal reading
    assert (np.isnan(streamed) == np.isnan(causal)).all() and np.isfinite(causal[-1])
    _close(streamed[np.isfinite(causal)], causal[np.isfinite(causal)])
    restored = part.stream()
    restored.load(stream.state())
    _close(restored.values(np.arange(kept, 300)), whole[kept:])


@pytest.mark.parametrize(("length", "segment"), [(45, 3), (16, 1)])
def test_streamed_rows_by_the_sliding_recurrence(monkeypatch, length, segment):
    """A streamed row's products follow from the row before's (discord_sliding): each phase of
    the segments stepped, recomputed every REFRESH rows, a level moved far (the products of the
    raw values then large) read as the loop over every training subsequence reads it."""
    from madcluster.score import discord_sliding

    part = _one(periodic_pair(500, 0), length, segments=(segment,))
    rows = periodic_pair(260, 1).astype(np.float64)
    rows[120:, 0] += 40.0  # 40 training deviations up: the same shapes, far from every raw value
    rows[60:75, 1] = rows[60:75, 1][::-1].copy()
    steps = []
    advance = discord_sliding.SlidingProducts._advance
    monkeypatch.setattr(
        discord_sliding.SlidingProducts,
        "_advance",
        lambda self, *args: steps.append(1) or advance(self, *args),
    )
    stream = part.stream()
    for at in range(len(rows)):
        stream.append(rows[at : at + 1])
    assert isinstance(stream.products, discord_sliding.SlidingProducts)
    m = part.length
    assert len(steps) > (len(rows) - m + 1) * 0.8  # most rows stepped, not recomputed
    read = part.read(rows)
    _close(stream.distances, part.distances(read, np.arange(len(rows) - m + 1)))
    if segment == 1:
        _close(stream.distances, _direct(part, read))
    assert set(stream.state()) == {"steps", "rows", "distances"}  # the products are not saved
    # read back mid-way into a stream that stepped other rows: its products computed again
    half, again = part.stream(), part.stream()
    half.append(rows[:150])
    again.append(rows[::-1][:150])
    again.load(half.state())
    for at in range(150, len(rows)):
        again.append(rows[at : at + 1])
    _close(again.distances, stream.distances)
    # above the products' memory cap a streamed row reads every training subsequence instead
    monkeypatch.setattr(discord_join, "_SLIDING_BYTES", 0)
    capped = part.stream()
    capped.append(rows[:m])
    capped.append(rows[m : m + 1])
    assert capped.products is None
    _close(capped.distances, stream.distances[:2])


@pytest.mark.parametrize("dense_share", [0.0, 1.0, None])
def test_float32_products_pick_candidates_the_float64_ones_decide(monkeypatch, dense_share):
    """From MIN_VALUES values per subsequence the training blocks are float32 and only select
    candidates (discord_filter): the distances are still the loop's, every block computed in
    float64 (share 0), candidates only (share 1) or as the part chooses, self-matches left out
    too; the float32 products are within the bound of the float64 ones."""
    from madcluster.score import discord_filter

    if dense_share is not None:
        monkeypatch.setattr(discord_filter, "DENSE_SHARE", dense_share)
    monkeypatch.setattr(discord_join, "_TRAINING_BLOCK", 100)
    train = periodic_pair(300, 0)
    part = _one(train, 40)
    assert part.dims >= discord_filter.MIN_VALUES and part._training_block(0).dtype == np.float32
    rows = periodic_pair(120, 2)
    rows[50:70, 0] = rows[50:70, 0][::-1].copy()
    read = part.read(rows)
    each = _direct(part, read)
    _close(part.distances(read, np.arange(len(rows) - 39)), each)
    _close(part.distances(read, np.asarray([60])), each[60:61])  # a streamed row's product
    starts = np.arange(0, 261, 7)
    near = _direct(part, part.read(train), exclude_near=True)[starts]
    _close(part.distances(part.read(train), starts, exclude_near=True), near)
    # the bound: float32 against float64 products of z-normalised rows, large norms included
    flat, norms = discord.normalised(read, np.arange(80), 40)
    query = np.concatenate([-2.0 * flat, np.ones((80, 1))], axis=1)
    block = part._training_rows(np.arange(200))
    exact = query @ block.T
    rounded = query.astype(np.float32) @ block.astype(np.float32).T
    bound = discord_filter.rounding_bound(norms, part.dims)
    assert (np.abs(rounded - exact) <= bound[:, None]).all()


def test_files_round_trip_and_the_training_cap(monkeypatch, test_rows):
    train = periodic_pair(400, 0)
    part = Discord.fit(train, FitContext(16), lengths=(40, 16), segments=(2, 1))
    again = part_class("discord").from_arrays(part.to_arrays())
    assert isinstance(again, Discord)
    for name in ("lengths", "segments", "centres", "spreads", "training_first"):
        assert getattr(again, name) == getattr(part, name), name
    assert np.array_equal(again.training, train.astype(np.float64)) and again.training_first == 0
    assert np.array_equal(again.values(test_rows), part.values(test_rows))
    # at most MAX_TRAINING_VALUES kept values: the last rows, where they start recorded
    monkeypatch.setattr(discord, "MAX_TRAINING_VALUES", 2 * 150)
    whole = Discord.fit(train, FitContext(16), lengths=(20,))
    capped = whole.joins[0]
    assert capped.training.shape == (150, 2) and capped.training_first == 250
    assert np.array_equal(capped.training, train[250:].astype(np.float64))
    assert whole.mean.tolist() == part.mean.tolist()  # the scale is still all rows'
    n, m = len(train), capped.length
    # the training reading: a subsequence before the kept rows has them all as neighbours
    direct = _per_step(_direct(capped, capped.read(train), exclude_near=True), n, m)
    _close(capped.reference_values(train), direct)


def test_the_training_scores_read_the_discord_without_self_matches():
    """The threshold comes from training scores with the discord's reference reading: matched to
    themselves the training rows would score below any test rows and the threshold sit too low."""
    train = periodic_pair(800, 0)
    model = MADCluster(input_terms=("discord",), **TINY).fit(train)
    fitted = model.model_
    combination = fitted.combination
    checked = fitted.inputs.check_rows(train)
    own = fitted.own_scores(fitted.inputs.model_input(checked))
    in_sample = combination.score(checked, own)
    assert np.allclose(model.decision_scores_, combination.reference_score(checked, own))
    assert model.decision_scores_.mean() > in_sample.mean()


def test_the_reversed_stretch_stands_out_and_its_neighbours_do_not(test_rows):
    train = periodic_pair(2000, 0)
    part = _one(train, 20)
    values = part.values(test_rows)
    reference = part.reference_values(train)
    # the stretch's edge steps are also covered by subsequences that hold one or two of its rows
    assert values[152:168].min() > 2 * np.quantile(reference, 0.999)
    assert values[150:170].max() > 20 * np.quantile(reference, 0.999)
    assert np.median(values[:120]) < np.quantile(reference, 0.99)
    assert max(values[140:145].max(), values[175:180].max()) < np.quantile(reference, 0.99)


def test_a_model_with_the_discord_part(test_rows, tmp_path):
    train = periodic_pair(800, 0)
    model = MADCluster(input_terms=("kmeans", "ar", "discord"), **TINY).fit(train)
    combination = model.model_.combination
    assert combination.names == ["own", "kmeans", "ar", "discord"]
    discord_part = combination.parts[-1]
    assert isinstance(discord_part, Discord)
    assert combination.final_after() == max(TINY["window_size"], discord_part.length - 1)
    scores = model.decision_function(test_rows)
    assert np.isfinite(scores).all()
    scorer = model.stream()
    results = [scorer.update(test_rows[:100])]
    scorer.save(tmp_path / "s.mcs")
    restored = StreamScorer.restore(model.model_, tmp_path / "s.mcs")
    results += [restored.update(test_rows[a:b]) for a, b in ((100, 101), (101, 300))]
    finals = np.concatenate([r.final_scores for r in results] + [restored.pending().scores])
    _close(finals, scores)
    model.save(tmp_path / "m.mcz")
    _close(MADCluster.load(tmp_path / "m.mcz").decision_function(test_rows), scores)
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from madcluster.estimator.export import export_onnx
    from madcluster.estimator.onnx_scorer import OnnxScorer

    export_onnx(model.model_, tmp_path / "m.onnx")
    _close(OnnxScorer(tmp_path / "m.onnx").decision_function(test_rows), scores)


def test_segment_means_against_the_sampled_reading_with_every_neighbour(monkeypatch, test_rows):
    """With segments of p rows the exact part is the sampled reading of older files given every
    training subsequence as a neighbour: the same distances, to rounding."""
    from madcluster.score import discord_sampled

    train = periodic_pair(700, 0, period=70.0)
    monkeypatch.setattr(discord_sampled, "MAX_NEIGHBOURS", 10**6)
    sampled = discord_sampled.SampledDiscord.fit(train, FitContext(16))
    assert sampled.segment > 1 and len(sampled.neighbours) == 700 - sampled.length + 1
    (part,) = Discord.fit(train, FitContext(16), (sampled.length,), (sampled.segment,)).joins
    assert part.dims == 2 * sampled.length // sampled.segment
    rows = periodic_pair(300, 1, period=70.0)
    rows[100:130, 1] = rows[100:130, 1][::-1].copy()
    _close(part.values(rows), sampled.values(rows), 1e-12)
    _close(part.reference_values(train), sampled.reference_values(train), 1e-12)


@pytest.mark.parametrize(
    ("period", "n_rows", "lengths", "segments"),
    [
        (20, 600, (20, 48), (1, 1)),  # a short period: the short join is the longer one
        (70, 2000, (70, 48), (3, 1)),  # a long one averages segments of ceil(70 / 32) rows
        (300, 5000, (300, 48), (10, 1)),
        (48, 5000, (48,), (2,)),  # the period's join is the short one
        (16, 100, (16, 25), (1, 1)),  # few rows: the short join at most a quarter of them
        (16, 64, (16,), (1,)),
    ],
)
def test_the_joins_follow_the_period(period, n_rows, lengths, segments):
    assert discord.join_shapes(period, n_rows) == (lengths, segments)


def test_two_joins_read_the_larger_of_their_standardised_readings(test_rows):
    train = periodic_pair(600, 0)
    part = Discord.fit(train, FitContext(16))
    assert part.lengths == (20, 48) and part.length == 48 and part.final_after() == 47
    readings = [j.reference_values(train) for j in part.joins]
    assert part.centres == tuple(r.mean() for r in readings)
    assert part.spreads == tuple(r.std() for r in readings)
    each = [
        (j.values(test_rows) - c) / s for j, c, s in zip(part.joins, part.centres, part.spreads)
    ]
    _close(part.values(test_rows), np.maximum(*each), 0.0)
    reference = np.maximum(*((r - c) / s for r, c, s in zip(readings, part.centres, part.spreads)))
    _close(part.reference_values(train), reference, 0.0)
    # the reversed stretch stands out of the training reading
    assert part.values(test_rows)[152:168].min() > part.reference_values(train).max()


def test_each_generation_of_the_exact_part_loads_as_itself():
    """Today's arrays load as :class:`Discord`; arrays without the causal reading's mark (files
    from before it) as :class:`DiscordWithoutAtOnce`, which adds nothing at once, in a stream
    too, while its final values stay the exact part's."""
    train, test = periodic_pair(600, 0), periodic_pair(300, 1)
    part = Discord.fit(train, FitContext(16), lengths=(20,))
    assert type(parts_from_arrays(("discord",), parts_to_arrays([part]))[0]) is Discord
    old_arrays = {k: v for k, v in part.to_arrays().items() if k != "trailing_at_once"}
    old = discord_from_arrays(old_arrays)
    assert type(old) is DiscordWithoutAtOnce and old_arrays.keys() == old.to_arrays().keys()
    assert not old.at_once(test).any() and np.isfinite(part.at_once(test)[40:]).all()
    stream, new_stream = old.stream(), part.stream()
    assert not stream.append(test).any() and np.isfinite(new_stream.append(test)[40:]).all()
    _close(stream.values(np.arange(280)), part.values(test)[:280])


def test_the_candidates_kept_per_model_give_the_bits_computed_again(monkeypatch):
    """A join reads its float64 candidates from rows it computed once (a stream's next row asks
    for nearly the same ones); the distances are the bits of computing them again each time."""
    train, test = periodic_pair(800, 0), periodic_pair(300, 2)
    kept = _one(train, 48)
    assert kept.dims >= discord_join.MIN_VALUES  # float32 products pick float64 candidates
    read = kept.read(test)
    first = kept.distances(read, np.arange(200))
    rows, filled = kept._row_cache
    assert 0 < filled.sum() < len(filled)  # the candidates alone
    again = kept.distances(read, np.arange(1, 201))  # the next subsequences: mostly read back
    monkeypatch.setattr(discord_join, "_KEPT_BYTES", 0)
    fresh = _one(train, 48)
    assert fresh._row_cache is None
    assert np.array_equal(first, fresh.distances(read, np.arange(200)))
    assert np.array_equal(again, fresh.distances(read, np.arange(1, 201)))
    assert np.array_equal(rows[filled], fresh._training_rows(np.flatnonzero(filled)))

"""Issue 37 item 4: `--threads N` on a machine whose cores are busy warns, from a measurement,
that one thread may be faster (2 threads ran 50x slower per batch than one on a busy 2-core box)."""

from __future__ import annotations

import argparse

import torch

from madcluster.cli import runtime_options as options


def _args(threads):
    return argparse.Namespace(device=None, threads=threads)


def test_a_measured_slowdown_warns(monkeypatch, capsys):
    monkeypatch.setattr(options, "thread_slowdown", lambda threads: 50.0)
    monkeypatch.setattr("madcluster.threads.resolve_threads", lambda threads: threads)
    before = torch.get_num_threads()
    try:
        options.apply_runtime(_args(2))
        err = capsys.readouterr().err
        assert "--threads 2: a test product ran 50.0x slower on 2 threads than on one" in err
        assert "--threads 1 may be much faster" in err
    finally:
        torch.set_num_threads(before)


def test_no_warning_when_threads_help_or_for_one_thread(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(options, "thread_slowdown", lambda threads: calls.append(threads) or 0.6)
    monkeypatch.setattr("madcluster.threads.resolve_threads", lambda threads: threads)
    before = torch.get_num_threads()
    try:
        options.apply_runtime(_args(2))
        options.apply_runtime(_args(1))
    finally:
        torch.set_num_threads(before)
    assert capsys.readouterr().err == "" and calls == [2]


def test_the_measurement_is_a_ratio_and_restores_the_threads():
    before = torch.get_num_threads()
    try:
        ratio = options.thread_slowdown(2, seconds=0.005)
        assert 0 < ratio < 1000 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)

"""The Base Embedder contract: base models with their own loss/score, and alternating optimiser steps."""

from __future__ import annotations

import numpy as np
import torch
from series_helpers import make_series
from torch import nn

from madcluster import MADCluster
from madcluster.embedders import BaseEmbedder, EmbedderOutput


class TinyAutoencoder(BaseEmbedder):
    """A detector in its own right: reconstruction loss and per-step reconstruction error."""

    def __init__(self, n_features: int, f: int = 8) -> None:
        super().__init__()
        self.encoder = nn.GRU(n_features, f, batch_first=True)
        self.decoder = nn.Linear(f, n_features)
        self.out_features = f

    def forward(self, x):
        h = self.encoder(x)[0]
        error = (self.decoder(h) - x).pow(2).mean(dim=-1)
        return EmbedderOutput(h=h, loss=error.mean(), score=error)


class TwoPhase(TinyAutoencoder):
    """Alternating updates, like USAD / BeatGAN: an auxiliary step on the decoder, then the joint step."""

    def configure_optimizers(self, head_params, *, lr, weight_decay):
        self.aux_steps = 0
        main = torch.optim.Adam([*self.encoder.parameters(), *head_params], lr=lr)
        aux = torch.optim.Adam(self.decoder.parameters(), lr=lr)
        return [main, aux]

    def training_step(self, x, objective, optimizers, epoch=1):
        main, aux = optimizers
        aux.zero_grad()
        self(x).loss.backward()
        aux.step()
        self.aux_steps += 1
        main.zero_grad()
        loss = objective(self(x))
        loss.backward()
        main.step()
        return loss.detach()


def test_base_loss_and_score_are_combined():
    x = make_series(600, 3)
    model = MADCluster(input_terms=None, embedder=TinyAutoencoder(3), window_size=20, stride=4, epochs=2, random_state=0).fit(x)
    assert {"own", "base"} <= set(model.score_stats_)
    scores = model.decision_function(x)
    # standardised combination: training scores have mean ~0 and each part contributes
    assert abs(model.decision_scores_.mean()) < 1e-6 and np.isfinite(scores).all()
    raw = MADCluster(input_terms=None, embedder=TinyAutoencoder(3), window_size=20, stride=4, epochs=2, random_state=0, base_score_combination="raw", score_scaling="raw").fit(x)
    terms = raw.score_terms(x)
    np.testing.assert_allclose(raw.decision_function(x), terms["cluster"] + terms["distance"] + terms["base"], rtol=1e-5)


def test_alternating_training_steps_are_used():
    x = make_series(600, 3)
    embedder = TwoPhase(3)
    model = MADCluster(input_terms=None, embedder=embedder, window_size=20, stride=4, epochs=1, batch_size=32, random_state=0, validation_size=0.0).fit(x)
    assert model.net_.embedder.aux_steps == int(np.ceil(len(range(0, 600 - 20 + 1, 4)) / 32))

"""Simple window baselines: PCA reconstruction error and distance to the nearest KMeans centroid.

Both detectors follow the same recipe, so they are compared with MADCluster on equal terms:

1. a ``StandardScaler`` is fitted on the training series (per feature; scalers never see test data);
2. the scaled series is cut into windows of ``window_size`` steps every ``stride`` steps (the last
   window is aligned to the series end, :func:`madcluster.data.windows.window_starts`), each
   flattened to one vector of ``window_size * n_features`` values;
3. the model is fitted on the training windows (evenly subsampled to at most
   ``max_train_windows``, so large series stay fast and deterministic);
4. every window gets a score: the Euclidean distance of its vector to the PCA subspace
   (reconstruction error) / to the nearest centroid;
5. **window scores go back to time points by averaging**: the score of point t is the mean score of
   all scored windows that contain t (the package-wide convention of
   :func:`~madcluster.data.windows.windows_to_points`, and TSB-AD/TimeEval's reverse windowing for
   KMeansAD). This is O(T) with two ``bincount`` passes, never an (N, L) matrix, and gives exactly
   one score per time point.

Scoring runs in chunks of windows (a few tens of MB at a time), so memory stays flat on SMD-sized
series (450k x 38). The default ``stride=None`` means ``max(1, window_size // 10)``: each point
averages about 10 windows, and the cost is about a tenth of ``stride=1`` (every window, TSB-AD's
setting), which stays available. The same stride is used for training windows and scoring.

**Relation to TSB-AD's published baselines** (Liu & Paparrizos, NeurIPS 2024):

* ``KMeansDetector`` mirrors TSB-AD's ``KMeansAD`` (from TimeEval): flattened sliding windows,
  distance to the assigned centroid, mean over covering windows. Differences: TSB-AD fits on the
  series it scores (transductive, no train/test split) with its defaults ``k=20, window_size=20``,
  does not standardise, and min-max scales the final scores; here the model is fitted on the
  training series only, inputs are standardised with training statistics, scores are left raw
  (monotone transforms do not change AUC/VUS metrics) and ``MiniBatchKMeans`` replaces ``KMeans``
  when more than 10,000 training windows are used.
* ``PCADetector`` differs more: TSB-AD's multivariate ``PCA`` (from PyOD) scores single time points
  (no windows) by the sum of distances to the eigenvectors weighted by inverse explained variance.
  Here PCA is fitted on windows, keeps ``n_components`` (a variance fraction or a count), and scores
  the reconstruction error (as a distance: the root of the squared error), so it sees temporal
  context like the other detectors.
* Both default to the estimator's window size (the paper's L), not TSB-AD's 20.
"""

from madcluster.baselines.kmeans import KMEANS_PARAMS, KMeansDetector
from madcluster.baselines.pca import PCA_PARAMS, PCADetector
from madcluster.baselines.window_detector import WINDOW_PARAMS, window_scores_to_points

__all__ = [
    "KMEANS_PARAMS",
    "PCA_PARAMS",
    "WINDOW_PARAMS",
    "KMeansDetector",
    "PCADetector",
    "window_scores_to_points",
]

"""Training a MADCluster network: the epoch loop, its progress lines and resumable checkpoints."""

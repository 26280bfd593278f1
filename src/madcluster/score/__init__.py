"""Score arithmetic shared by the estimator and the image detector: from network outputs to one
score per step, the input terms added to it."""

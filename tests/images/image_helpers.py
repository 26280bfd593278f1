"""Sizes of the tiny generated set the image tests share (32 x 32, a few images a class)."""

TINY = {"size": 32, "n_train": 6, "n_test_good": 2, "n_test_per_defect": 1}

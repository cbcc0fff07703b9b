"""Synthetic images with known ground truth, for tests, benchmarks and the bundled examples."""

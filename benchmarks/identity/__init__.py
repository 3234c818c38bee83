"""Whether a faster setting answers alike: verdicts on the same asks, and two runs sample by sample."""

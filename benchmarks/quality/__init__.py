"""How well the judge agrees with humans: WikiEval pairs, judge settings, hostile text."""

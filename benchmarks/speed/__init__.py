"""How fast: localeval against Ragas, scaling, threads, where the time goes, bulk runs, batch invariance's cost."""
